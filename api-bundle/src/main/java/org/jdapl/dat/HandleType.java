package org.jdapl.dat;

/** DAT_HANDLE_TYPE: the kind of DAT object a handle stands for ({@code dat_get_handle_type}). */
public enum HandleType {
    /** DAT_HANDLE_TYPE_IA. */
    IA(DatReturnSubtype.INVALID_HANDLE_IA),
    /** DAT_HANDLE_TYPE_EP. */
    EP(DatReturnSubtype.INVALID_HANDLE_EP),
    /** DAT_HANDLE_TYPE_LMR. */
    LMR(DatReturnSubtype.INVALID_HANDLE_LMR),
    /** DAT_HANDLE_TYPE_RMR. */
    RMR(DatReturnSubtype.INVALID_HANDLE_RMR),
    /** DAT_HANDLE_TYPE_PZ. */
    PZ(DatReturnSubtype.INVALID_HANDLE_PZ),
    /** DAT_HANDLE_TYPE_PSP. */
    PSP(DatReturnSubtype.INVALID_HANDLE_PSP),
    /** DAT_HANDLE_TYPE_RSP. */
    RSP(DatReturnSubtype.INVALID_HANDLE_RSP),
    /** DAT_HANDLE_TYPE_CR. */
    CR(DatReturnSubtype.INVALID_HANDLE_CR),
    /** DAT_HANDLE_TYPE_CNO. */
    CNO(DatReturnSubtype.INVALID_HANDLE_CNO),
    /** DAT_HANDLE_TYPE_EVD. */
    EVD(DatReturnSubtype.INVALID_HANDLE_EVD_REQUEST),
    /** DAT_HANDLE_TYPE_SRQ. */
    SRQ(DatReturnSubtype.INVALID_HANDLE_SRQ),
    /** DAT_HANDLE_TYPE_CSP. */
    CSP(DatReturnSubtype.INVALID_HANDLE_CSP);

    private final DatReturnSubtype invalidHandleSubtype;

    HandleType(DatReturnSubtype invalidHandleSubtype) {
        this.invalidHandleSubtype = invalidHandleSubtype;
    }

    /** The INVALID_HANDLE subtype a call on a freed handle of this kind reports. */
    public DatReturnSubtype invalidHandleSubtype() {
        return invalidHandleSubtype;
    }

    /** The INVALID_HANDLE exception for a freed or foreign handle of this kind. */
    public DatException invalid(String detail) {
        return DatException.invalidHandle(invalidHandleSubtype, detail);
    }
}
