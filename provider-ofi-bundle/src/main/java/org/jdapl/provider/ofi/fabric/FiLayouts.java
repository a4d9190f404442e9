package org.jdapl.provider.ofi.fabric;

import java.util.List;

/**
 * Offsets and sizes of every libfabric struct member the provider touches, for the one API version
 * it is built for ({@link Fi#API_VERSION}, 1.17) on x86-64 Linux. The ops tables' members are the
 * offsets of their function pointers; {@code FI_CHECK_OP} compares them with the table's
 * {@code size} ({@link FiCalls#op}). {@link #ALL} lists the structs for the layout probe test.
 */
public final class FiLayouts {
    private FiLayouts() {
    }

    private static final int P = 8;

    public static final FiStruct FI_INFO = new FiStruct("fi_info", 120);
    public static final long INFO_NEXT = FI_INFO.field("next", 0, P);
    public static final long INFO_CAPS = FI_INFO.field("caps", 8, 8);
    public static final long INFO_MODE = FI_INFO.field("mode", 16, 8);
    public static final long INFO_ADDR_FORMAT = FI_INFO.field("addr_format", 24, 4);
    public static final long INFO_SRC_ADDRLEN = FI_INFO.field("src_addrlen", 32, 8);
    public static final long INFO_DEST_ADDRLEN = FI_INFO.field("dest_addrlen", 40, 8);
    public static final long INFO_SRC_ADDR = FI_INFO.field("src_addr", 48, P);
    public static final long INFO_DEST_ADDR = FI_INFO.field("dest_addr", 56, P);
    public static final long INFO_HANDLE = FI_INFO.field("handle", 64, P);
    public static final long INFO_TX_ATTR = FI_INFO.field("tx_attr", 72, P);
    public static final long INFO_RX_ATTR = FI_INFO.field("rx_attr", 80, P);
    public static final long INFO_EP_ATTR = FI_INFO.field("ep_attr", 88, P);
    public static final long INFO_DOMAIN_ATTR = FI_INFO.field("domain_attr", 96, P);
    public static final long INFO_FABRIC_ATTR = FI_INFO.field("fabric_attr", 104, P);

    public static final FiStruct FI_TX_ATTR = new FiStruct("fi_tx_attr", 80);
    public static final long TX_CAPS = FI_TX_ATTR.field("caps", 0, 8);
    public static final long TX_OP_FLAGS = FI_TX_ATTR.field("op_flags", 16, 8);
    public static final long TX_MSG_ORDER = FI_TX_ATTR.field("msg_order", 24, 8);
    public static final long TX_INJECT_SIZE = FI_TX_ATTR.field("inject_size", 40, 8);
    public static final long TX_SIZE = FI_TX_ATTR.field("size", 48, 8);
    public static final long TX_IOV_LIMIT = FI_TX_ATTR.field("iov_limit", 56, 8);
    public static final long TX_RMA_IOV_LIMIT = FI_TX_ATTR.field("rma_iov_limit", 64, 8);

    public static final FiStruct FI_RX_ATTR = new FiStruct("fi_rx_attr", 64);
    public static final long RX_CAPS = FI_RX_ATTR.field("caps", 0, 8);
    public static final long RX_SIZE = FI_RX_ATTR.field("size", 48, 8);
    public static final long RX_IOV_LIMIT = FI_RX_ATTR.field("iov_limit", 56, 8);

    public static final FiStruct FI_EP_ATTR = new FiStruct("fi_ep_attr", 96);
    public static final long EP_TYPE = FI_EP_ATTR.field("type", 0, 4);
    public static final long EP_PROTOCOL = FI_EP_ATTR.field("protocol", 4, 4);
    public static final long EP_MAX_MSG_SIZE = FI_EP_ATTR.field("max_msg_size", 16, 8);

    public static final FiStruct FI_DOMAIN_ATTR = new FiStruct("fi_domain_attr", 192);
    public static final long DOMAIN_NAME = FI_DOMAIN_ATTR.field("name", 8, P);
    public static final long DOMAIN_THREADING = FI_DOMAIN_ATTR.field("threading", 16, 4);
    public static final long DOMAIN_CONTROL_PROGRESS = FI_DOMAIN_ATTR.field("control_progress", 20, 4);
    public static final long DOMAIN_DATA_PROGRESS = FI_DOMAIN_ATTR.field("data_progress", 24, 4);
    public static final long DOMAIN_MR_MODE = FI_DOMAIN_ATTR.field("mr_mode", 36, 4);
    public static final long DOMAIN_MR_KEY_SIZE = FI_DOMAIN_ATTR.field("mr_key_size", 40, 8);
    public static final long DOMAIN_CQ_CNT = FI_DOMAIN_ATTR.field("cq_cnt", 56, 8);
    public static final long DOMAIN_EP_CNT = FI_DOMAIN_ATTR.field("ep_cnt", 64, 8);
    public static final long DOMAIN_MAX_EP_SRX_CTX = FI_DOMAIN_ATTR.field("max_ep_srx_ctx", 112, 8);
    public static final long DOMAIN_MR_CNT = FI_DOMAIN_ATTR.field("mr_cnt", 176, 8);

    public static final FiStruct FI_FABRIC_ATTR = new FiStruct("fi_fabric_attr", 32);
    public static final long FABRIC_NAME = FI_FABRIC_ATTR.field("name", 8, P);
    public static final long FABRIC_PROV_NAME = FI_FABRIC_ATTR.field("prov_name", 16, P);
    public static final long FABRIC_PROV_VERSION = FI_FABRIC_ATTR.field("prov_version", 24, 4);
    public static final long FABRIC_API_VERSION = FI_FABRIC_ATTR.field("api_version", 28, 4);

    public static final FiStruct FID = new FiStruct("fid", 24);
    public static final long FID_FCLASS = FID.field("fclass", 0, 8);
    public static final long FID_CONTEXT = FID.field("context", 8, P);
    public static final long FID_OPS = FID.field("ops", 16, P);

    public static final FiStruct FI_OPS = new FiStruct("fi_ops", 56);
    public static final long OPS_SIZE = FI_OPS.field("size", 0, 8);
    public static final long OPS_CLOSE = FI_OPS.field("close", 8, P);
    public static final long OPS_BIND = FI_OPS.field("bind", 16, P);
    public static final long OPS_CONTROL = FI_OPS.field("control", 24, P);

    public static final FiStruct FID_FABRIC = new FiStruct("fid_fabric", 40);
    public static final long FABRIC_OPS = FID_FABRIC.field("ops", 24, P);

    public static final FiStruct FI_OPS_FABRIC = new FiStruct("fi_ops_fabric", 56);
    public static final long OPS_FABRIC_DOMAIN = FI_OPS_FABRIC.field("domain", 8, P);
    public static final long OPS_FABRIC_PASSIVE_EP = FI_OPS_FABRIC.field("passive_ep", 16, P);
    public static final long OPS_FABRIC_EQ_OPEN = FI_OPS_FABRIC.field("eq_open", 24, P);
    public static final long OPS_FABRIC_TRYWAIT = FI_OPS_FABRIC.field("trywait", 40, P);

    public static final FiStruct FID_DOMAIN = new FiStruct("fid_domain", 40);
    public static final long DOMAIN_OPS = FID_DOMAIN.field("ops", 24, P);
    public static final long DOMAIN_MR = FID_DOMAIN.field("mr", 32, P);

    public static final FiStruct FI_OPS_DOMAIN = new FiStruct("fi_ops_domain", 96);
    public static final long OPS_DOMAIN_CQ_OPEN = FI_OPS_DOMAIN.field("cq_open", 16, P);
    public static final long OPS_DOMAIN_ENDPOINT = FI_OPS_DOMAIN.field("endpoint", 24, P);
    public static final long OPS_DOMAIN_SRX_CTX = FI_OPS_DOMAIN.field("srx_ctx", 64, P);

    public static final FiStruct FI_OPS_MR = new FiStruct("fi_ops_mr", 32);
    public static final long OPS_MR_REG = FI_OPS_MR.field("reg", 8, P);

    public static final FiStruct FID_MR = new FiStruct("fid_mr", 40);
    public static final long MR_MEM_DESC = FID_MR.field("mem_desc", 24, P);
    public static final long MR_KEY = FID_MR.field("key", 32, 8);

    public static final FiStruct FID_EP = new FiStruct("fid_ep", 80);
    public static final long EP_OPS = FID_EP.field("ops", 24, P);
    public static final long EP_CM = FID_EP.field("cm", 32, P);
    public static final long EP_MSG = FID_EP.field("msg", 40, P);
    public static final long EP_RMA = FID_EP.field("rma", 48, P);

    public static final FiStruct FID_PEP = new FiStruct("fid_pep", 40);
    public static final long PEP_OPS = FID_PEP.field("ops", 24, P);
    public static final long PEP_CM = FID_PEP.field("cm", 32, P);

    public static final FiStruct FI_OPS_EP = new FiStruct("fi_ops_ep", 64);
    public static final long OPS_EP_CANCEL = FI_OPS_EP.field("cancel", 8, P);
    public static final long OPS_EP_GETOPT = FI_OPS_EP.field("getopt", 16, P);
    public static final long OPS_EP_SETOPT = FI_OPS_EP.field("setopt", 24, P);

    public static final FiStruct FI_OPS_CM = new FiStruct("fi_ops_cm", 80);
    public static final long OPS_CM_GETNAME = FI_OPS_CM.field("getname", 16, P);
    public static final long OPS_CM_GETPEER = FI_OPS_CM.field("getpeer", 24, P);
    public static final long OPS_CM_CONNECT = FI_OPS_CM.field("connect", 32, P);
    public static final long OPS_CM_LISTEN = FI_OPS_CM.field("listen", 40, P);
    public static final long OPS_CM_ACCEPT = FI_OPS_CM.field("accept", 48, P);
    public static final long OPS_CM_REJECT = FI_OPS_CM.field("reject", 56, P);
    public static final long OPS_CM_SHUTDOWN = FI_OPS_CM.field("shutdown", 64, P);

    public static final FiStruct FI_OPS_MSG = new FiStruct("fi_ops_msg", 80);
    public static final long OPS_MSG_RECVV = FI_OPS_MSG.field("recvv", 16, P);
    public static final long OPS_MSG_SENDV = FI_OPS_MSG.field("sendv", 40, P);
    public static final long OPS_MSG_SENDMSG = FI_OPS_MSG.field("sendmsg", 48, P);
    public static final long OPS_MSG_SENDDATA = FI_OPS_MSG.field("senddata", 64, P);

    public static final FiStruct FI_OPS_RMA = new FiStruct("fi_ops_rma", 80);
    public static final long OPS_RMA_READV = FI_OPS_RMA.field("readv", 16, P);
    public static final long OPS_RMA_READMSG = FI_OPS_RMA.field("readmsg", 24, P);
    public static final long OPS_RMA_WRITEV = FI_OPS_RMA.field("writev", 40, P);

    public static final long OPS_RMA_WRITEMSG = FI_OPS_RMA.field("writemsg", 48, P);

    public static final FiStruct FI_RMA_IOV = new FiStruct("fi_rma_iov", 24);
    public static final long RMA_IOV_ADDR = FI_RMA_IOV.field("addr", 0, 8);
    public static final long RMA_IOV_LEN = FI_RMA_IOV.field("len", 8, 8);
    public static final long RMA_IOV_KEY = FI_RMA_IOV.field("key", 16, 8);

    public static final FiStruct FI_MSG_RMA = new FiStruct("fi_msg_rma", 64);
    public static final long MSG_RMA_MSG_IOV = FI_MSG_RMA.field("msg_iov", 0, P);
    public static final long MSG_RMA_DESC = FI_MSG_RMA.field("desc", 8, P);
    public static final long MSG_RMA_IOV_COUNT = FI_MSG_RMA.field("iov_count", 16, 8);
    public static final long MSG_RMA_ADDR = FI_MSG_RMA.field("addr", 24, 8);
    public static final long MSG_RMA_RMA_IOV = FI_MSG_RMA.field("rma_iov", 32, P);
    public static final long MSG_RMA_RMA_IOV_COUNT = FI_MSG_RMA.field("rma_iov_count", 40, 8);
    public static final long MSG_RMA_CONTEXT = FI_MSG_RMA.field("context", 48, P);
    public static final long MSG_RMA_DATA = FI_MSG_RMA.field("data", 56, 8);

    public static final FiStruct FI_MSG = new FiStruct("fi_msg", 48);
    public static final long MSG_MSG_IOV = FI_MSG.field("msg_iov", 0, P);
    public static final long MSG_DESC = FI_MSG.field("desc", 8, P);
    public static final long MSG_IOV_COUNT = FI_MSG.field("iov_count", 16, 8);
    public static final long MSG_ADDR = FI_MSG.field("addr", 24, 8);
    public static final long MSG_CONTEXT = FI_MSG.field("context", 32, P);
    public static final long MSG_DATA = FI_MSG.field("data", 40, 8);

    public static final FiStruct FI_EQ_ATTR = new FiStruct("fi_eq_attr", 32);
    public static final long EQ_ATTR_SIZE = FI_EQ_ATTR.field("size", 0, 8);
    public static final long EQ_ATTR_FLAGS = FI_EQ_ATTR.field("flags", 8, 8);
    public static final long EQ_ATTR_WAIT_OBJ = FI_EQ_ATTR.field("wait_obj", 16, 4);

    public static final FiStruct FID_EQ = new FiStruct("fid_eq", 32);
    public static final long EQ_OPS = FID_EQ.field("ops", 24, P);

    public static final FiStruct FI_OPS_EQ = new FiStruct("fi_ops_eq", 48);
    public static final long OPS_EQ_READ = FI_OPS_EQ.field("read", 8, P);
    public static final long OPS_EQ_READERR = FI_OPS_EQ.field("readerr", 16, P);

    public static final FiStruct FI_EQ_CM_ENTRY = new FiStruct("fi_eq_cm_entry", 16);
    public static final long CM_ENTRY_FID = FI_EQ_CM_ENTRY.field("fid", 0, P);
    public static final long CM_ENTRY_INFO = FI_EQ_CM_ENTRY.field("info", 8, P);
    public static final long CM_ENTRY_DATA = FI_EQ_CM_ENTRY.field("data", 16, 0);

    public static final FiStruct FI_EQ_ERR_ENTRY = new FiStruct("fi_eq_err_entry", 48);
    public static final long EQ_ERR_FID = FI_EQ_ERR_ENTRY.field("fid", 0, P);
    public static final long EQ_ERR_ERR = FI_EQ_ERR_ENTRY.field("err", 24, 4);
    public static final long EQ_ERR_PROV_ERRNO = FI_EQ_ERR_ENTRY.field("prov_errno", 28, 4);
    public static final long EQ_ERR_ERR_DATA = FI_EQ_ERR_ENTRY.field("err_data", 32, P);
    public static final long EQ_ERR_ERR_DATA_SIZE = FI_EQ_ERR_ENTRY.field("err_data_size", 40, 8);

    public static final FiStruct FI_CQ_ATTR = new FiStruct("fi_cq_attr", 40);
    public static final long CQ_ATTR_SIZE = FI_CQ_ATTR.field("size", 0, 8);
    public static final long CQ_ATTR_FORMAT = FI_CQ_ATTR.field("format", 16, 4);
    public static final long CQ_ATTR_WAIT_OBJ = FI_CQ_ATTR.field("wait_obj", 20, 4);

    public static final FiStruct FID_CQ = new FiStruct("fid_cq", 32);
    public static final long CQ_OPS = FID_CQ.field("ops", 24, P);

    public static final FiStruct FI_OPS_CQ = new FiStruct("fi_ops_cq", 64);
    public static final long OPS_CQ_READ = FI_OPS_CQ.field("read", 8, P);
    public static final long OPS_CQ_READERR = FI_OPS_CQ.field("readerr", 24, P);

    public static final FiStruct FI_CQ_DATA_ENTRY = new FiStruct("fi_cq_data_entry", 40);
    public static final long CQE_OP_CONTEXT = FI_CQ_DATA_ENTRY.field("op_context", 0, P);
    public static final long CQE_FLAGS = FI_CQ_DATA_ENTRY.field("flags", 8, 8);
    public static final long CQE_LEN = FI_CQ_DATA_ENTRY.field("len", 16, 8);
    public static final long CQE_DATA = FI_CQ_DATA_ENTRY.field("data", 32, 8);

    public static final FiStruct FI_CQ_ERR_ENTRY = new FiStruct("fi_cq_err_entry", 80);
    public static final long CQ_ERR_OP_CONTEXT = FI_CQ_ERR_ENTRY.field("op_context", 0, P);
    public static final long CQ_ERR_FLAGS = FI_CQ_ERR_ENTRY.field("flags", 8, 8);
    public static final long CQ_ERR_LEN = FI_CQ_ERR_ENTRY.field("len", 16, 8);
    public static final long CQ_ERR_OLEN = FI_CQ_ERR_ENTRY.field("olen", 48, 8);
    public static final long CQ_ERR_ERR = FI_CQ_ERR_ENTRY.field("err", 56, 4);
    public static final long CQ_ERR_PROV_ERRNO = FI_CQ_ERR_ENTRY.field("prov_errno", 60, 4);

    public static final FiStruct IOVEC = new FiStruct("iovec", 16);
    public static final long IOV_BASE = IOVEC.field("iov_base", 0, P);
    public static final long IOV_LEN = IOVEC.field("iov_len", 8, 8);

    /** Every struct above, for the layout probe. */
    public static final List<FiStruct> ALL = List.of(FI_INFO, FI_TX_ATTR, FI_RX_ATTR, FI_EP_ATTR, FI_DOMAIN_ATTR,
            FI_FABRIC_ATTR, FID, FI_OPS, FID_FABRIC, FI_OPS_FABRIC, FID_DOMAIN, FI_OPS_DOMAIN, FI_OPS_MR, FID_MR,
            FID_EP, FID_PEP, FI_OPS_EP, FI_OPS_CM, FI_OPS_MSG, FI_OPS_RMA, FI_RMA_IOV, FI_MSG_RMA, FI_MSG, FI_EQ_ATTR, FID_EQ, FI_OPS_EQ,
            FI_EQ_CM_ENTRY, FI_EQ_ERR_ENTRY, FI_CQ_ATTR, FID_CQ, FI_OPS_CQ, FI_CQ_DATA_ENTRY, FI_CQ_ERR_ENTRY, IOVEC);
}
