package org.jdapl.provider.ofa.verbs;

import static org.jdapl.provider.ofa.verbs.CField.Kind.BYTES;
import static org.jdapl.provider.ofa.verbs.CField.Kind.I32;
import static org.jdapl.provider.ofa.verbs.CField.Kind.I64;
import static org.jdapl.provider.ofa.verbs.CField.Kind.POINTER;
import static org.jdapl.provider.ofa.verbs.CField.Kind.U16;
import static org.jdapl.provider.ofa.verbs.CField.Kind.U8;

import java.util.List;

/**
 * Every C struct and member of libibverbs, librdmacm and libc the bindings use, with offsets and
 * sizes of x86-64 Linux (rdma-core 44 headers). {@link #ALL} lists them for the layout probe.
 */
public final class Structs {
    private Structs() {
    }

    /** {@code struct ibv_context}. */
    public static final class IbvContext {
        public static final CStruct S = new CStruct("ibv_context", 328);
        public static final CField DEVICE = S.field("device", 0, POINTER);
        /** The embedded {@code struct ibv_context_ops}. */
        public static final CField OPS = S.field("ops", 8, BYTES);
        public static final CField CMD_FD = S.field("cmd_fd", 264, I32);
        public static final CField ASYNC_FD = S.field("async_fd", 268, I32);
        public static final CField NUM_COMP_VECTORS = S.field("num_comp_vectors", 272, I32);

        private IbvContext() {
        }
    }

    /** {@code struct ibv_context_ops}: the provider's function pointers behind the inline verbs. */
    public static final class IbvContextOps {
        public static final CStruct S = new CStruct("ibv_context_ops", 256);
        public static final CField ALLOC_MW = S.field("alloc_mw", 56, POINTER);
        public static final CField BIND_MW = S.field("bind_mw", 64, POINTER);
        public static final CField DEALLOC_MW = S.field("dealloc_mw", 72, POINTER);
        public static final CField POLL_CQ = S.field("poll_cq", 88, POINTER);
        public static final CField REQ_NOTIFY_CQ = S.field("req_notify_cq", 96, POINTER);
        public static final CField POST_SRQ_RECV = S.field("post_srq_recv", 160, POINTER);
        public static final CField POST_SEND = S.field("post_send", 200, POINTER);
        public static final CField POST_RECV = S.field("post_recv", 208, POINTER);

        private IbvContextOps() {
        }
    }

    /** {@code struct ibv_device_attr} ({@code ibv_query_device}). */
    public static final class IbvDeviceAttr {
        public static final CStruct S = new CStruct("ibv_device_attr", 232);
        public static final CField FW_VER = S.field("fw_ver", 0, BYTES);
        public static final CField NODE_GUID = S.field("node_guid", 64, I64);
        public static final CField SYS_IMAGE_GUID = S.field("sys_image_guid", 72, I64);
        public static final CField MAX_MR_SIZE = S.field("max_mr_size", 80, I64);
        public static final CField PAGE_SIZE_CAP = S.field("page_size_cap", 88, I64);
        public static final CField VENDOR_ID = S.field("vendor_id", 96, I32);
        public static final CField VENDOR_PART_ID = S.field("vendor_part_id", 100, I32);
        public static final CField HW_VER = S.field("hw_ver", 104, I32);
        public static final CField MAX_QP = S.field("max_qp", 108, I32);
        public static final CField MAX_QP_WR = S.field("max_qp_wr", 112, I32);
        public static final CField DEVICE_CAP_FLAGS = S.field("device_cap_flags", 116, I32);
        public static final CField MAX_SGE = S.field("max_sge", 120, I32);
        public static final CField MAX_SGE_RD = S.field("max_sge_rd", 124, I32);
        public static final CField MAX_CQ = S.field("max_cq", 128, I32);
        public static final CField MAX_CQE = S.field("max_cqe", 132, I32);
        public static final CField MAX_MR = S.field("max_mr", 136, I32);
        public static final CField MAX_PD = S.field("max_pd", 140, I32);
        public static final CField MAX_QP_RD_ATOM = S.field("max_qp_rd_atom", 144, I32);
        public static final CField MAX_QP_INIT_RD_ATOM = S.field("max_qp_init_rd_atom", 156, I32);
        /** {@code enum ibv_atomic_cap}: IBV_ATOMIC_NONE (0), IBV_ATOMIC_HCA, IBV_ATOMIC_GLOB. */
        public static final CField ATOMIC_CAP = S.field("atomic_cap", 164, I32);
        public static final CField MAX_MW = S.field("max_mw", 176, I32);
        public static final CField MAX_SRQ = S.field("max_srq", 212, I32);
        public static final CField MAX_SRQ_WR = S.field("max_srq_wr", 216, I32);
        public static final CField MAX_SRQ_SGE = S.field("max_srq_sge", 220, I32);
        public static final CField PHYS_PORT_CNT = S.field("phys_port_cnt", 227, U8);

        private IbvDeviceAttr() {
        }
    }

    /** {@code struct ibv_port_attr} ({@code ibv_query_port}). */
    public static final class IbvPortAttr {
        public static final CStruct S = new CStruct("ibv_port_attr", 52);
        public static final CField STATE = S.field("state", 0, I32);
        public static final CField MAX_MTU = S.field("max_mtu", 4, I32);
        public static final CField ACTIVE_MTU = S.field("active_mtu", 8, I32);
        public static final CField GID_TBL_LEN = S.field("gid_tbl_len", 12, I32);
        public static final CField PORT_CAP_FLAGS = S.field("port_cap_flags", 16, I32);
        public static final CField MAX_MSG_SZ = S.field("max_msg_sz", 20, I32);
        public static final CField LID = S.field("lid", 34, U16);
        public static final CField ACTIVE_WIDTH = S.field("active_width", 43, U8);
        public static final CField ACTIVE_SPEED = S.field("active_speed", 44, U8);
        public static final CField PHYS_STATE = S.field("phys_state", 45, U8);
        public static final CField LINK_LAYER = S.field("link_layer", 46, U8);

        private IbvPortAttr() {
        }
    }

    /** {@code struct ibv_pd}. */
    public static final class IbvPd {
        public static final CStruct S = new CStruct("ibv_pd", 16);
        public static final CField CONTEXT = S.field("context", 0, POINTER);
        public static final CField HANDLE = S.field("handle", 8, I32);

        private IbvPd() {
        }
    }

    /** {@code struct ibv_mr}. */
    public static final class IbvMr {
        public static final CStruct S = new CStruct("ibv_mr", 48);
        public static final CField CONTEXT = S.field("context", 0, POINTER);
        public static final CField PD = S.field("pd", 8, POINTER);
        public static final CField ADDR = S.field("addr", 16, POINTER);
        public static final CField LENGTH = S.field("length", 24, I64);
        public static final CField HANDLE = S.field("handle", 32, I32);
        public static final CField LKEY = S.field("lkey", 36, I32);
        public static final CField RKEY = S.field("rkey", 40, I32);

        private IbvMr() {
        }
    }

    /** {@code struct ibv_mw}. */
    public static final class IbvMw {
        public static final CStruct S = new CStruct("ibv_mw", 32);
        public static final CField CONTEXT = S.field("context", 0, POINTER);
        public static final CField PD = S.field("pd", 8, POINTER);
        public static final CField RKEY = S.field("rkey", 16, I32);
        public static final CField HANDLE = S.field("handle", 20, I32);
        public static final CField TYPE = S.field("type", 24, I32);

        private IbvMw() {
        }
    }

    /** {@code struct ibv_comp_channel}. */
    public static final class IbvCompChannel {
        public static final CStruct S = new CStruct("ibv_comp_channel", 16);
        public static final CField CONTEXT = S.field("context", 0, POINTER);
        public static final CField FD = S.field("fd", 8, I32);
        public static final CField REFCNT = S.field("refcnt", 12, I32);

        private IbvCompChannel() {
        }
    }

    /** {@code struct ibv_cq}. */
    public static final class IbvCq {
        public static final CStruct S = new CStruct("ibv_cq", 128);
        public static final CField CONTEXT = S.field("context", 0, POINTER);
        public static final CField CHANNEL = S.field("channel", 8, POINTER);
        public static final CField CQ_CONTEXT = S.field("cq_context", 16, POINTER);
        public static final CField HANDLE = S.field("handle", 24, I32);
        public static final CField CQE = S.field("cqe", 28, I32);

        private IbvCq() {
        }
    }

    /** {@code struct ibv_qp_cap}. */
    public static final class IbvQpCap {
        public static final CStruct S = new CStruct("ibv_qp_cap", 20);
        public static final CField MAX_SEND_WR = S.field("max_send_wr", 0, I32);
        public static final CField MAX_RECV_WR = S.field("max_recv_wr", 4, I32);
        public static final CField MAX_SEND_SGE = S.field("max_send_sge", 8, I32);
        public static final CField MAX_RECV_SGE = S.field("max_recv_sge", 12, I32);
        public static final CField MAX_INLINE_DATA = S.field("max_inline_data", 16, I32);

        private IbvQpCap() {
        }
    }

    /** {@code struct ibv_qp_init_attr} ({@code ibv_create_qp}). */
    public static final class IbvQpInitAttr {
        public static final CStruct S = new CStruct("ibv_qp_init_attr", 64);
        public static final CField QP_CONTEXT = S.field("qp_context", 0, POINTER);
        public static final CField SEND_CQ = S.field("send_cq", 8, POINTER);
        public static final CField RECV_CQ = S.field("recv_cq", 16, POINTER);
        public static final CField SRQ = S.field("srq", 24, POINTER);
        /** The embedded {@code struct ibv_qp_cap}. */
        public static final CField CAP = S.field("cap", 32, BYTES);
        public static final CField QP_TYPE = S.field("qp_type", 52, I32);
        public static final CField SQ_SIG_ALL = S.field("sq_sig_all", 56, I32);

        private IbvQpInitAttr() {
        }
    }

    /** {@code struct ibv_qp}. */
    public static final class IbvQp {
        public static final CStruct S = new CStruct("ibv_qp", 160);
        public static final CField CONTEXT = S.field("context", 0, POINTER);
        public static final CField PD = S.field("pd", 16, POINTER);
        public static final CField SEND_CQ = S.field("send_cq", 24, POINTER);
        public static final CField RECV_CQ = S.field("recv_cq", 32, POINTER);
        public static final CField HANDLE = S.field("handle", 48, I32);
        public static final CField QP_NUM = S.field("qp_num", 52, I32);
        public static final CField STATE = S.field("state", 56, I32);
        public static final CField QP_TYPE = S.field("qp_type", 60, I32);

        private IbvQp() {
        }
    }

    /** {@code struct ibv_wc}: one work completion ({@code ibv_poll_cq}). */
    public static final class IbvWc {
        public static final CStruct S = new CStruct("ibv_wc", 48);
        public static final CField WR_ID = S.field("wr_id", 0, I64);
        public static final CField STATUS = S.field("status", 8, I32);
        public static final CField OPCODE = S.field("opcode", 12, I32);
        public static final CField VENDOR_ERR = S.field("vendor_err", 16, I32);
        public static final CField BYTE_LEN = S.field("byte_len", 20, I32);
        public static final CField QP_NUM = S.field("qp_num", 28, I32);
        public static final CField SRC_QP = S.field("src_qp", 32, I32);
        public static final CField WC_FLAGS = S.field("wc_flags", 36, I32);
        public static final CField INVALIDATED_RKEY = S.field("invalidated_rkey", 24, I32);
        /** The other member of the union at 24: {@code __be32 imm_data}. */
        public static final CField IMM_DATA = S.field("imm_data", 24, I32);

        private IbvWc() {
        }
    }

    /** {@code struct ibv_async_event}. */
    public static final class IbvAsyncEvent {
        public static final CStruct S = new CStruct("ibv_async_event", 16);
        /** The union {@code element} (cq, qp, srq, wq pointer or port number). */
        public static final CField ELEMENT = S.field("element", 0, POINTER);
        public static final CField EVENT_TYPE = S.field("event_type", 8, I32);

        private IbvAsyncEvent() {
        }
    }

    /** {@code struct rdma_event_channel}. */
    public static final class RdmaEventChannel {
        public static final CStruct S = new CStruct("rdma_event_channel", 4);
        public static final CField FD = S.field("fd", 0, I32);

        private RdmaEventChannel() {
        }
    }

    /** {@code struct rdma_cm_id}. */
    public static final class RdmaCmId {
        public static final CStruct S = new CStruct("rdma_cm_id", 416);
        public static final CField VERBS = S.field("verbs", 0, POINTER);
        public static final CField CHANNEL = S.field("channel", 8, POINTER);
        public static final CField CONTEXT = S.field("context", 16, POINTER);
        public static final CField QP = S.field("qp", 24, POINTER);
        /** The source address, a {@code struct sockaddr_storage} inside a union. */
        public static final CField SRC_ADDR = S.field("route.addr.src_addr", 32, BYTES);
        public static final CField DST_ADDR = S.field("route.addr.dst_addr", 160, BYTES);
        public static final CField PS = S.field("ps", 344, I32);
        public static final CField PORT_NUM = S.field("port_num", 348, U8);

        private RdmaCmId() {
        }
    }

    /** {@code struct rdma_cm_event}. */
    public static final class RdmaCmEvent {
        public static final CStruct S = new CStruct("rdma_cm_event", 80);
        public static final CField ID = S.field("id", 0, POINTER);
        public static final CField LISTEN_ID = S.field("listen_id", 8, POINTER);
        public static final CField EVENT = S.field("event", 16, I32);
        public static final CField STATUS = S.field("status", 20, I32);
        public static final CField PRIVATE_DATA = S.field("param.conn.private_data", 24, POINTER);
        public static final CField PRIVATE_DATA_LEN = S.field("param.conn.private_data_len", 32, U8);
        public static final CField RESPONDER_RESOURCES = S.field("param.conn.responder_resources", 33, U8);
        /** {@code param.ud.ah_attr}: the datagram peer's address, of an RDMA_PS_UDP ESTABLISHED event. */
        public static final CField UD_AH_ATTR = S.field("param.ud.ah_attr", 40, BYTES);
        public static final CField UD_QP_NUM = S.field("param.ud.qp_num", 72, I32);
        public static final CField UD_QKEY = S.field("param.ud.qkey", 76, I32);
        public static final CField INITIATOR_DEPTH = S.field("param.conn.initiator_depth", 34, U8);

        private RdmaCmEvent() {
        }
    }

    /** {@code struct ibv_sge}: one scatter/gather entry. */
    public static final class IbvSge {
        public static final CStruct S = new CStruct("ibv_sge", 16);
        public static final CField ADDR = S.field("addr", 0, I64);
        public static final CField LENGTH = S.field("length", 8, I32);
        public static final CField LKEY = S.field("lkey", 12, I32);

        private IbvSge() {
        }
    }

    /** {@code struct ibv_send_wr} ({@code ibv_post_send}). */
    public static final class IbvSendWr {
        public static final CStruct S = new CStruct("ibv_send_wr", 128);
        public static final CField WR_ID = S.field("wr_id", 0, I64);
        public static final CField NEXT = S.field("next", 8, POINTER);
        public static final CField SG_LIST = S.field("sg_list", 16, POINTER);
        public static final CField NUM_SGE = S.field("num_sge", 24, I32);
        public static final CField OPCODE = S.field("opcode", 28, I32);
        public static final CField SEND_FLAGS = S.field("send_flags", 32, I32);
        public static final CField INVALIDATE_RKEY = S.field("invalidate_rkey", 36, I32);
        public static final CField REMOTE_ADDR = S.field("wr.rdma.remote_addr", 40, I64);
        public static final CField RKEY = S.field("wr.rdma.rkey", 48, I32);
        /** The other member of the union at 36: {@code __be32 imm_data}. */
        public static final CField IMM_DATA = S.field("imm_data", 36, I32);
        public static final CField ATOMIC_REMOTE_ADDR = S.field("wr.atomic.remote_addr", 40, I64);
        public static final CField ATOMIC_COMPARE_ADD = S.field("wr.atomic.compare_add", 48, I64);
        public static final CField ATOMIC_SWAP = S.field("wr.atomic.swap", 56, I64);
        public static final CField ATOMIC_RKEY = S.field("wr.atomic.rkey", 64, I32);
        public static final CField UD_AH = S.field("wr.ud.ah", 40, POINTER);
        public static final CField UD_REMOTE_QPN = S.field("wr.ud.remote_qpn", 48, I32);
        public static final CField UD_REMOTE_QKEY = S.field("wr.ud.remote_qkey", 52, I32);
        public static final CField BIND_MW_MW = S.field("bind_mw.mw", 80, POINTER);
        public static final CField BIND_MW_RKEY = S.field("bind_mw.rkey", 88, I32);
        /** The embedded {@code struct ibv_mw_bind_info}. */
        public static final CField BIND_MW_INFO = S.field("bind_mw.bind_info", 96, BYTES);

        private IbvSendWr() {
        }
    }

    /** {@code struct ibv_recv_wr} ({@code ibv_post_recv}, {@code ibv_post_srq_recv}). */
    public static final class IbvRecvWr {
        public static final CStruct S = new CStruct("ibv_recv_wr", 32);
        public static final CField WR_ID = S.field("wr_id", 0, I64);
        public static final CField NEXT = S.field("next", 8, POINTER);
        public static final CField SG_LIST = S.field("sg_list", 16, POINTER);
        public static final CField NUM_SGE = S.field("num_sge", 24, I32);

        private IbvRecvWr() {
        }
    }

    /** {@code struct ibv_mw_bind_info}. */
    public static final class IbvMwBindInfo {
        public static final CStruct S = new CStruct("ibv_mw_bind_info", 32);
        public static final CField MR = S.field("mr", 0, POINTER);
        public static final CField ADDR = S.field("addr", 8, I64);
        public static final CField LENGTH = S.field("length", 16, I64);
        public static final CField MW_ACCESS_FLAGS = S.field("mw_access_flags", 24, I32);

        private IbvMwBindInfo() {
        }
    }

    /** {@code struct ibv_mw_bind} ({@code ibv_bind_mw} of a type 1 window). */
    public static final class IbvMwBind {
        public static final CStruct S = new CStruct("ibv_mw_bind", 48);
        public static final CField WR_ID = S.field("wr_id", 0, I64);
        public static final CField SEND_FLAGS = S.field("send_flags", 8, I32);
        /** The embedded {@code struct ibv_mw_bind_info}. */
        public static final CField BIND_INFO = S.field("bind_info", 16, BYTES);

        private IbvMwBind() {
        }
    }

    /** {@code struct ibv_qp_attr} ({@code ibv_modify_qp}, {@code rdma_init_qp_attr}). */
    public static final class IbvQpAttr {
        public static final CStruct S = new CStruct("ibv_qp_attr", 144);
        public static final CField QP_STATE = S.field("qp_state", 0, I32);
        public static final CField QKEY = S.field("qkey", 16, I32);
        public static final CField SQ_PSN = S.field("sq_psn", 24, I32);
        public static final CField QP_ACCESS_FLAGS = S.field("qp_access_flags", 32, I32);
        public static final CField PKEY_INDEX = S.field("pkey_index", 120, U16);
        public static final CField MAX_RD_ATOMIC = S.field("max_rd_atomic", 126, U8);
        public static final CField MAX_DEST_RD_ATOMIC = S.field("max_dest_rd_atomic", 127, U8);
        public static final CField MIN_RNR_TIMER = S.field("min_rnr_timer", 128, U8);
        public static final CField PORT_NUM = S.field("port_num", 129, U8);
        public static final CField TIMEOUT = S.field("timeout", 130, U8);
        public static final CField RETRY_CNT = S.field("retry_cnt", 131, U8);
        public static final CField RNR_RETRY = S.field("rnr_retry", 132, U8);

        private IbvQpAttr() {
        }
    }

    /** {@code struct ibv_ah_attr} ({@code ibv_create_ah}; {@code rdma_ud_param.ah_attr}). */
    public static final class IbvAhAttr {
        public static final CStruct S = new CStruct("ibv_ah_attr", 32);
        public static final CField DGID = S.field("grh.dgid", 0, BYTES);
        public static final CField FLOW_LABEL = S.field("grh.flow_label", 16, I32);
        public static final CField SGID_INDEX = S.field("grh.sgid_index", 20, U8);
        public static final CField HOP_LIMIT = S.field("grh.hop_limit", 21, U8);
        public static final CField TRAFFIC_CLASS = S.field("grh.traffic_class", 22, U8);
        public static final CField DLID = S.field("dlid", 24, U16);
        public static final CField SL = S.field("sl", 26, U8);
        public static final CField IS_GLOBAL = S.field("is_global", 29, U8);
        public static final CField PORT_NUM = S.field("port_num", 30, U8);

        private IbvAhAttr() {
        }
    }

    /** {@code struct ibv_srq_init_attr} ({@code ibv_create_srq}). */
    public static final class IbvSrqInitAttr {
        public static final CStruct S = new CStruct("ibv_srq_init_attr", 24);
        public static final CField MAX_WR = S.field("attr.max_wr", 8, I32);
        public static final CField MAX_SGE = S.field("attr.max_sge", 12, I32);
        public static final CField SRQ_LIMIT = S.field("attr.srq_limit", 16, I32);

        private IbvSrqInitAttr() {
        }
    }

    /** {@code struct ibv_srq_attr} ({@code ibv_modify_srq}). */
    public static final class IbvSrqAttr {
        public static final CStruct S = new CStruct("ibv_srq_attr", 12);
        public static final CField MAX_WR = S.field("max_wr", 0, I32);
        public static final CField MAX_SGE = S.field("max_sge", 4, I32);
        public static final CField SRQ_LIMIT = S.field("srq_limit", 8, I32);

        private IbvSrqAttr() {
        }
    }

    /** {@code struct rdma_conn_param} ({@code rdma_connect}, {@code rdma_accept}). */
    public static final class RdmaConnParam {
        public static final CStruct S = new CStruct("rdma_conn_param", 24);
        public static final CField PRIVATE_DATA = S.field("private_data", 0, POINTER);
        public static final CField PRIVATE_DATA_LEN = S.field("private_data_len", 8, U8);
        public static final CField RESPONDER_RESOURCES = S.field("responder_resources", 9, U8);
        public static final CField INITIATOR_DEPTH = S.field("initiator_depth", 10, U8);
        public static final CField FLOW_CONTROL = S.field("flow_control", 11, U8);
        public static final CField RETRY_COUNT = S.field("retry_count", 12, U8);
        public static final CField RNR_RETRY_COUNT = S.field("rnr_retry_count", 13, U8);
        public static final CField SRQ = S.field("srq", 14, U8);
        public static final CField QP_NUM = S.field("qp_num", 16, I32);

        private RdmaConnParam() {
        }
    }

    /** {@code struct sockaddr_in}. */
    public static final class SockaddrIn {
        public static final CStruct S = new CStruct("sockaddr_in", 16);
        public static final CField SIN_FAMILY = S.field("sin_family", 0, U16);
        /** The port, in network byte order. */
        public static final CField SIN_PORT = S.field("sin_port", 2, U16);
        /** The IPv4 address, in network byte order. */
        public static final CField SIN_ADDR = S.field("sin_addr", 4, BYTES);

        private SockaddrIn() {
        }
    }

    /** {@code struct pollfd}. */
    public static final class PollFd {
        public static final CStruct S = new CStruct("pollfd", 8);
        public static final CField FD = S.field("fd", 0, I32);
        public static final CField EVENTS = S.field("events", 4, U16);
        public static final CField REVENTS = S.field("revents", 6, U16);

        private PollFd() {
        }
    }

    /** Every struct above, for the layout probe. */
    public static final List<CStruct> ALL = List.of(IbvContext.S, IbvContextOps.S, IbvDeviceAttr.S, IbvPortAttr.S,
            IbvPd.S, IbvMr.S, IbvMw.S, IbvCompChannel.S, IbvCq.S, IbvQpCap.S, IbvQpInitAttr.S, IbvQp.S, IbvWc.S,
            IbvAsyncEvent.S, RdmaEventChannel.S, RdmaCmId.S, RdmaCmEvent.S, SockaddrIn.S, PollFd.S, IbvSge.S, IbvSendWr.S,
            IbvRecvWr.S, IbvMwBindInfo.S, IbvMwBind.S, IbvQpAttr.S, IbvAhAttr.S, IbvSrqInitAttr.S, IbvSrqAttr.S, RdmaConnParam.S);
}
