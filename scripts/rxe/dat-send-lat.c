/*
 * The send/recv ping-pong of DatBench and ib_send_lat, written against the DAT 2.0 C API and run
 * through OFED's uDAPL (libdat2 with its cma provider, libdaplofa): how far a DAT implementation in C
 * stands from perftest on the same device, the baseline for jdapl's own DAT ping-pong.
 *
 * Each side posts a receive, the client sends, the server answers once its receive completes,
 * every completion is busy-polled with dat_evd_dequeue, and each side reposts its receive before it
 * sends, as ib_send_lat does. Sends are suppressed (DAT_COMPLETION_SUPPRESS_FLAG) but every 16th,
 * which keeps the send queue from filling. The client prints the median half round trip from post
 * to post, as ib_send_lat's t_typical and DatBench time theirs:
 *
 *   dat-send-lat <ia name> <size> <iterations> [<server address>]    (no address: the server)
 *
 * The server prints "listening" once the client may connect; the client prints "dat-send-lat <size>
 * <median half round trip in us>". Both exit 0, or print a message and exit 1.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#define CONN_QUAL 45300
#define TIMEOUT (60 * 1000 * 1000)
#define SIGNAL_EVERY 16
#define RECV_COOKIE 1
#define SEND_COOKIE 2

static void check(DAT_RETURN r, const char *what) {
    if (r != DAT_SUCCESS) {
        const char *major, *minor;
        dat_strerror(r, &major, &minor);
        fprintf(stderr, "dat-send-lat: %s: %s %s\n", what, major, minor);
        exit(1);
    }
}

static DAT_EVENT_NUMBER wait_event(DAT_EVD_HANDLE evd, DAT_EVENT *event) {
    DAT_COUNT more;
    check(dat_evd_wait(evd, TIMEOUT, 1, event, &more), "dat_evd_wait");
    return event->event_number;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

/*
 * Busy-polls for the next receive completion (cookie RECV_COOKIE); send completions are taken on the
 * way. With its IB extensions, OFED's uDAPL reports some DTO completions as DAT_IB_DTO_EVENT, whose
 * data begins with the DTO completion's.
 */
static void await_receive(DAT_EVD_HANDLE evd, double deadline) {
    DAT_EVENT event;
    for (unsigned spins = 1;; spins++) {
        DAT_RETURN r = dat_evd_dequeue(evd, &event);
        if (DAT_GET_TYPE(r) == DAT_QUEUE_EMPTY) {
            if ((spins & 0xfff) == 0 && now_ns() > deadline) {
                fprintf(stderr, "dat-send-lat: no receive completion within the time limit\n");
                exit(1);
            }
            continue;
        }
        check(r, "dat_evd_dequeue");
        if ((event.event_number != DAT_DTO_COMPLETION_EVENT && event.event_number != (int) DAT_IB_DTO_EVENT)
                || event.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
            fprintf(stderr, "dat-send-lat: unexpected event 0x%x (status %d)\n", event.event_number,
                    event.event_data.dto_completion_event_data.status);
            exit(1);
        }
        if (event.event_data.dto_completion_event_data.user_cookie.as_64 == RECV_COOKIE) {
            return;
        }
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: dat-send-lat <ia name> <size> <iterations> [<server address>]\n");
        return 1;
    }
    int size = atoi(argv[2]), iters = atoi(argv[3]);
    if (size < 1 || size > 4096 || iters < 2) {
        fprintf(stderr, "dat-send-lat: the size must be 1 to 4096 bytes and the iterations at least 2\n");
        return 1;
    }
    int server = argc < 5;
    DAT_IA_HANDLE ia;
    DAT_EVD_HANDLE async = DAT_HANDLE_NULL, dto, conn, cr_evd;
    DAT_PZ_HANDLE pz;
    DAT_EP_HANDLE ep;
    check(dat_ia_open(argv[1], 8, &async, &ia), "dat_ia_open");
    check(dat_pz_create(ia, &pz), "dat_pz_create");
    check(dat_evd_create(ia, 128, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto), "dat_evd_create");
    check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn), "dat_evd_create");
    check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd), "dat_evd_create");
    DAT_EP_ATTR attr;
    memset(&attr, 0, sizeof attr);
    attr.service_type = DAT_SERVICE_TYPE_RC;
    attr.max_message_size = 4096;
    attr.max_rdma_size = 4096;
    attr.max_recv_dtos = 16;
    attr.max_request_dtos = 64;
    attr.max_recv_iov = 1;
    attr.max_request_iov = 1;
    attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
    check(dat_ep_create(ia, pz, dto, dto, conn, &attr, &ep), "dat_ep_create");

    char *buf;
    if (posix_memalign((void **) &buf, 4096, 8192)) {
        fprintf(stderr, "dat-send-lat: out of memory\n");
        return 1;
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
                                .segment_length = size};
    DAT_LMR_TRIPLET recv_iov = {.lmr_context = lkey, .virtual_address = (DAT_VADDR) (uintptr_t) (buf + 4096),
                                .segment_length = size};
    DAT_DTO_COOKIE recv_cookie = {.as_64 = RECV_COOKIE}, send_cookie = {.as_64 = SEND_COOKIE};
    DAT_EVENT event;

    check(dat_ep_post_recv(ep, 1, &recv_iov, recv_cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
    if (server) {
        DAT_PSP_HANDLE psp;
        check(dat_psp_create(ia, CONN_QUAL, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp), "dat_psp_create");
        printf("listening\n");
        fflush(stdout);
        if (wait_event(cr_evd, &event) != DAT_CONNECTION_REQUEST_EVENT) {
            fprintf(stderr, "dat-send-lat: expected a connection request\n");
            return 1;
        }
        check(dat_cr_accept(event.event_data.cr_arrival_event_data.cr_handle, ep, 0, NULL), "dat_cr_accept");
        check(dat_psp_free(psp), "dat_psp_free");
    } else {
        struct sockaddr_in addr;
        memset(&addr, 0, sizeof addr);
        addr.sin_family = AF_INET;
        if (inet_pton(AF_INET, argv[4], &addr.sin_addr) != 1) {
            fprintf(stderr, "dat-send-lat: bad address %s\n", argv[4]);
            return 1;
        }
        check(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR) &addr, CONN_QUAL, TIMEOUT, 0, NULL, DAT_QOS_BEST_EFFORT,
                             DAT_CONNECT_DEFAULT_FLAG), "dat_ep_connect");
    }
    if (wait_event(conn, &event) != DAT_CONNECTION_EVENT_ESTABLISHED) {
        fprintf(stderr, "dat-send-lat: connection event 0x%x, not ESTABLISHED\n", event.event_number);
        return 1;
    }

    double *posted = calloc(iters, sizeof *posted);
    double deadline = now_ns() + TIMEOUT * 1e3;
    for (int i = 0; i < iters; i++) {
        DAT_COMPLETION_FLAGS flags = (i + 1) % SIGNAL_EVERY == 0 ? DAT_COMPLETION_DEFAULT_FLAG
                                                                 : DAT_COMPLETION_SUPPRESS_FLAG;
        if (server) {
            await_receive(dto, deadline);
            if (i + 1 < iters) {
                check(dat_ep_post_recv(ep, 1, &recv_iov, recv_cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
            }
            check(dat_ep_post_send(ep, 1, &send_iov, send_cookie, flags), "dat_ep_post_send");
        } else {
            posted[i] = now_ns();
            check(dat_ep_post_send(ep, 1, &send_iov, send_cookie, flags), "dat_ep_post_send");
            await_receive(dto, deadline);
            if (i + 1 < iters) {
                check(dat_ep_post_recv(ep, 1, &recv_iov, recv_cookie, DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
            }
        }
    }
    if (!server) {
        for (int i = 0; i + 1 < iters; i++) {
            posted[i] = (posted[i + 1] - posted[i]) / 2 / 1000;
        }
        qsort(posted, iters - 1, sizeof *posted, by_value);
        printf("dat-send-lat %d %.2f\n", size, posted[(iters - 1) / 2]);
        check(dat_ep_disconnect(ep, DAT_CLOSE_ABRUPT_FLAG), "dat_ep_disconnect");
    }
    wait_event(conn, &event);
    dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
    return 0;
}
