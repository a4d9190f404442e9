/*
 * The C side of the interop cases between OFED's uDAPL (libdat2 with its cma provider, libdaplofa)
 * and jdapl's OFA provider, what OFED's dtest does not cover: a reject with private data arriving,
 * and graceful or abrupt disconnects initiated by either side with DISCONNECTED on both. Its Java
 * twin is org.jdapl.provider.ofa.rxe.InteropPeer; either may be the server.
 *
 *   dat-interop <ia name> server|client <case> [<server address>]
 *
 * Cases: reject (the server rejects with 48 bytes of private data 3, 4, ..., 50; the client must see
 * DAT_CONNECTION_EVENT_PEER_REJECTED with them), disc-<client|server>-<graceful|abrupt> (connect with
 * OFED dtest's private data 1..48, accepted with 2..49, one message each way, then the named side
 * disconnects with the named flag and both must see DAT_CONNECTION_EVENT_DISCONNECTED). Prints
 * "PASS <case> <side>" and exits 0, or "FAIL <case> <side>: why" and exits 1. The server prints
 * "listening" once the client may connect.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#define CONN_QUAL 45301
#define TIMEOUT (30 * 1000 * 1000)

static const char *kase, *side;

static void fail(const char *why) {
    printf("FAIL %s %s: %s\n", kase, side, why);
    exit(1);
}

static void check(DAT_RETURN r, const char *what) {
    if (r != DAT_SUCCESS) {
        const char *major, *minor;
        char msg[256];
        dat_strerror(r, &major, &minor);
        snprintf(msg, sizeof msg, "%s: %s %s", what, major, minor);
        fail(msg);
    }
}

static void wait_event(DAT_EVD_HANDLE evd, DAT_EVENT *event, const char *what) {
    DAT_COUNT more;
    check(dat_evd_wait(evd, TIMEOUT, 1, event, &more), what);
}

static void expect(DAT_EVD_HANDLE evd, DAT_EVENT *event, DAT_EVENT_NUMBER number, const char *what) {
    char msg[128];
    wait_event(evd, event, what);
    if (event->event_number != number) {
        snprintf(msg, sizeof msg, "%s: event 0x%x, expected 0x%x", what, event->event_number, number);
        fail(msg);
    }
}

/* A DTO completion of the operation; OFED's uDAPL reports some as DAT_IB_DTO_EVENT. */
static void await_dto(DAT_EVD_HANDLE evd, DAT_DTO_COOKIE cookie, const char *what) {
    DAT_EVENT event;
    wait_event(evd, &event, what);
    if ((event.event_number != DAT_DTO_COMPLETION_EVENT && event.event_number != (int) DAT_IB_DTO_EVENT)
            || event.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS
            || event.event_data.dto_completion_event_data.user_cookie.as_64 != cookie.as_64) {
        fail(what);
    }
}

static void pattern(unsigned char *b, int first) {
    for (int i = 0; i < 48; i++) {
        b[i] = (unsigned char) (i + first);
    }
}

static int has_pattern(const unsigned char *b, int len, int first) {
    if (b == NULL || len < 48) {
        return 0;
    }
    for (int i = 0; i < 48; i++) {
        if (b[i] != (unsigned char) (i + first)) {
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4 || (strcmp(argv[2], "client") == 0 && argc < 5)) {
        fprintf(stderr, "usage: dat-interop <ia name> server|client <case> [<server address>]\n");
        return 2;
    }
    side = argv[2];
    kase = argv[3];
    int server = strcmp(side, "server") == 0;
    int reject = strcmp(kase, "reject") == 0;
    char initiator[16] = "", how[16] = "";
    if (!reject && (sscanf(kase, "disc-%15[a-z]-%15[a-z]", initiator, how) != 2
                    || (strcmp(initiator, "client") && strcmp(initiator, "server"))
                    || (strcmp(how, "graceful") && strcmp(how, "abrupt")))) {
        fail("unknown case");
    }

    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async = DAT_HANDLE_NULL, dto, conn, cr_evd;
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE ep;
    DAT_EVENT event;
    check(dat_ia_open(argv[1], 8, &async, &ia), "dat_ia_open");
    check(dat_pz_create(ia, &pz), "dat_pz_create");
    check(dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto), "dat_evd_create");
    check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn), "dat_evd_create");
    check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd), "dat_evd_create");
    DAT_EP_ATTR attr;
    memset(&attr, 0, sizeof attr);
    attr.service_type = DAT_SERVICE_TYPE_RC;
    attr.max_message_size = 4096;
    attr.max_rdma_size = 4096;
    attr.max_recv_dtos = 4;
    attr.max_request_dtos = 4;
    attr.max_recv_iov = 1;
    attr.max_request_iov = 1;
    attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    check(dat_ep_create(ia, pz, dto, dto, conn, &attr, &ep), "dat_ep_create");

    char *buf;
    if (posix_memalign((void **) &buf, 4096, 8192)) {
        fail("out of memory");
    }
    memset(buf, 0, 8192);
    DAT_REGION_DESCRIPTION region;
    region.for_va = buf;
    DAT_LMR_HANDLE lmr;
    DAT_LMR_CONTEXT lkey;
    DAT_RMR_CONTEXT rkey;
    DAT_VLEN registered_size;
    DAT_VADDR registered_addr;
    check(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, 8192, pz, DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA,
                         &lmr, &lkey, &rkey, &registered_size, &registered_addr), "dat_lmr_create");
    DAT_LMR_TRIPLET send_iov = {.lmr_context = lkey, .virtual_address = (DAT_VADDR) (uintptr_t) buf,
                                .segment_length = 16};
    DAT_LMR_TRIPLET recv_iov = {.lmr_context = lkey, .virtual_address = (DAT_VADDR) (uintptr_t) (buf + 4096),
                                .segment_length = 64};
    DAT_DTO_COOKIE recv_cookie = {.as_64 = 1}, send_cookie = {.as_64 = 2};
    check(dat_ep_post_recv(ep, 1, &recv_iov, recv_cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");

    unsigned char pdata[48];
    if (server) {
        DAT_PSP_HANDLE psp;
        DAT_CR_PARAM cr_param;
        check(dat_psp_create(ia, CONN_QUAL, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp), "dat_psp_create");
        printf("listening\n");
        fflush(stdout);
        DAT_COUNT more;
        check(dat_evd_wait(cr_evd, 60 * 1000 * 1000, 1, &event, &more), "waiting for the connection request");
        if (event.event_number != DAT_CONNECTION_REQUEST_EVENT) {
            fail("expected a connection request");
        }
        DAT_CR_HANDLE cr = event.event_data.cr_arrival_event_data.cr_handle;
        check(dat_cr_query(cr, DAT_CSP_FIELD_ALL, &cr_param), "dat_cr_query");
        if (!has_pattern(cr_param.private_data, cr_param.private_data_size, 1)) {
            fail("the request's private data is not 1..48");
        }
        if (reject) {
            pattern(pdata, 3);
            check(dat_cr_reject(cr, 48, pdata), "dat_cr_reject");
            check(dat_psp_free(psp), "dat_psp_free");
            printf("PASS %s %s\n", kase, side);
            dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
            return 0;
        }
        pattern(pdata, 2);
        check(dat_cr_accept(cr, ep, 48, pdata), "dat_cr_accept");
        expect(conn, &event, DAT_CONNECTION_EVENT_ESTABLISHED, "waiting for ESTABLISHED");
        check(dat_psp_free(psp), "dat_psp_free");
    } else {
        struct sockaddr_in addr;
        memset(&addr, 0, sizeof addr);
        addr.sin_family = AF_INET;
        if (inet_pton(AF_INET, argv[4], &addr.sin_addr) != 1) {
            fail("bad address");
        }
        pattern(pdata, 1);
        check(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR) &addr, CONN_QUAL, TIMEOUT, 48, pdata, DAT_QOS_BEST_EFFORT,
                             DAT_CONNECT_DEFAULT_FLAG), "dat_ep_connect");
        if (reject) {
            expect(conn, &event, DAT_CONNECTION_EVENT_PEER_REJECTED, "waiting for PEER_REJECTED");
            if (!has_pattern(event.event_data.connect_event_data.private_data,
                             event.event_data.connect_event_data.private_data_size, 3)) {
                fail("the reject's private data is not 3..50");
            }
            printf("PASS %s %s\n", kase, side);
            dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
            return 0;
        }
        expect(conn, &event, DAT_CONNECTION_EVENT_ESTABLISHED, "waiting for ESTABLISHED");
        if (!has_pattern(event.event_data.connect_event_data.private_data,
                         event.event_data.connect_event_data.private_data_size, 2)) {
            fail("the accept's private data is not 2..49");
        }
    }
    /* one message each way, the client first */
    if (!server) {
        check(dat_ep_post_send(ep, 1, &send_iov, send_cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_send");
        await_dto(dto, send_cookie, "the send");
        await_dto(dto, recv_cookie, "the receive");
    } else {
        await_dto(dto, recv_cookie, "the receive");
        check(dat_ep_post_send(ep, 1, &send_iov, send_cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_send");
        await_dto(dto, send_cookie, "the send");
    }
    if (strcmp(initiator, side) == 0) {
        check(dat_ep_disconnect(ep, strcmp(how, "graceful") == 0 ? DAT_CLOSE_GRACEFUL_FLAG : DAT_CLOSE_ABRUPT_FLAG),
              "dat_ep_disconnect");
    }
    expect(conn, &event, DAT_CONNECTION_EVENT_DISCONNECTED, "waiting for DISCONNECTED");
    printf("PASS %s %s\n", kase, side);
    dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
    return 0;
}
