/*
 * A TCG plugin for qemu-system (plugin API version 1, QEMU 7.2 and later): counts the guest
 * instructions each vCPU executes in user mode and in kernel mode, and each user-mode translation
 * block's executions. Whenever a vCPU executes the marker instruction in user mode (the 7-byte NOP
 * "nopl 0xdeadbeef(%rax)", which compilers do not emit; insn-marker.c has it), it appends to the output
 * file what was counted since the marker before:
 *
 *   M <marks so far> <vCPU that marked> <vCPUs> then per vCPU: <user instructions> <kernel instructions>
 *   B <block address, hex> <instructions in the block> <executions on the marking vCPU>   (one per block run)
 *   L <block address, hex> <entries through a lookup on the marking vCPU>   (blocks so entered)
 *
 * A block is entered through a lookup when the one before it ended in a return or an indirect call or
 * jump, or started on another page: QEMU chains two translated blocks only for a direct jump within
 * the page where the jumping block starts, and looks every other target up.
 *
 * With code=on, each B line ends in the block's machine code (hex), for a disassembler.
 *
 * Usage: qemu-system-x86_64 -plugin insn-count-plugin.so,out=<file>,vcpus=<n>[,code=on] ...
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The plugin API (include/qemu/qemu-plugin.h of QEMU), version 1: the calls used here. */
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
                                          enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
__attribute__((visibility("default"))) int qemu_plugin_version = 1;

#define MAX_VCPUS 8
#define USER_TOP 0x800000000000ULL /* x86-64 user addresses lie below */

/* A user-mode block: its counts per vCPU, and those at the last marker. Kept for the whole run, as a
 * block translated again (after a flush) gets a record of its own: a run of minutes makes thousands. */
typedef struct {
    uint64_t vaddr;
    uint64_t insns;
    uint64_t runs[MAX_VCPUS];
    uint64_t marked[MAX_VCPUS];
    char *code; /* hex, with code=on */
    int endsIndirect; /* its last instruction is a return or an indirect call or jump */
    uint64_t lookups[MAX_VCPUS];
    uint64_t lookupsMarked[MAX_VCPUS];
} UserBlock;

/* Per vCPU, the user-mode block that ran last (NULL after kernel mode). */
static UserBlock *last[MAX_VCPUS];

static const unsigned char MARKER[7] = {0x0f, 0x1f, 0x80, 0xef, 0xbe, 0xad, 0xde};
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static UserBlock **blocks;
static size_t nblocks, capacity;
static uint64_t user[MAX_VCPUS], kernel[MAX_VCPUS], userMarked[MAX_VCPUS], kernelMarked[MAX_VCPUS];
static unsigned int vcpus = 1;
static int withCode;
static long marks;
static FILE *out;

/* A kernel block's udata is its instruction count. */
static void kernelBlockRan(unsigned int vcpu, void *udata) {
    if (vcpu < MAX_VCPUS) {
        kernel[vcpu] += (uintptr_t) udata;
        last[vcpu] = NULL;
    }
}

static void userBlockRan(unsigned int vcpu, void *udata) {
    UserBlock *b = udata;
    if (vcpu < MAX_VCPUS) {
        b->runs[vcpu]++;
        user[vcpu] += b->insns;
        UserBlock *p = last[vcpu];
        /* TCG chains two blocks only for a direct jump within the page where the first one starts;
         * every other transfer looks its target up. */
        if (p && (p->endsIndirect || (p->vaddr >> 12) != (b->vaddr >> 12))) {
            b->lookups[vcpu]++;
        }
        last[vcpu] = b;
    }
}

static void markerRan(unsigned int vcpu, void *udata) {
    (void) udata;
    if (vcpu >= MAX_VCPUS) {
        return;
    }
    pthread_mutex_lock(&lock);
    marks++;
    fprintf(out, "M %ld %u %u", marks, vcpu, vcpus);
    for (unsigned int i = 0; i < vcpus; i++) {
        fprintf(out, " %lu %lu", user[i] - userMarked[i], kernel[i] - kernelMarked[i]);
        userMarked[i] = user[i];
        kernelMarked[i] = kernel[i];
    }
    fputc('\n', out);
    for (size_t j = 0; j < nblocks; j++) {
        UserBlock *b = blocks[j];
        uint64_t runs = b->runs[vcpu] - b->marked[vcpu];
        if (runs) {
            fprintf(out, b->code ? "B %lx %lu %lu %s\n" : "B %lx %lu %lu\n", b->vaddr, b->insns, runs, b->code);
        }
        memcpy(b->marked, b->runs, sizeof b->runs);
        uint64_t lookups = b->lookups[vcpu] - b->lookupsMarked[vcpu];
        if (lookups) {
            fprintf(out, "L %lx %lu\n", b->vaddr, lookups);
        }
        memcpy(b->lookupsMarked, b->lookups, sizeof b->lookups);
    }
    fflush(out);
    pthread_mutex_unlock(&lock);
}

/* The machine code of a block's instructions, in hex. */
static char *hexCode(struct qemu_plugin_tb *tb, size_t n) {
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += qemu_plugin_insn_size(qemu_plugin_tb_get_insn(tb, i));
    }
    char *hex = malloc(2 * bytes + 1), *at = hex;
    if (!hex) {
        abort();
    }
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        const unsigned char *data = qemu_plugin_insn_data(insn);
        for (size_t k = 0; k < qemu_plugin_insn_size(insn); k++) {
            at += sprintf(at, "%02x", data[k]);
        }
    }
    *at = 0;
    return hex;
}

/* Whether an instruction is a return or an indirect call or jump. */
static int indirect(const unsigned char *c, size_t size) {
    size_t i = 0;
    while (i < size && (c[i] == 0x66 || c[i] == 0x67 || c[i] == 0xf2 || c[i] == 0xf3 || c[i] == 0x2e
                        || c[i] == 0x3e || (c[i] >= 0x40 && c[i] <= 0x4f))) {
        i++;
    }
    if (i >= size) {
        return 0;
    }
    if (c[i] == 0xc3 || c[i] == 0xc2 || c[i] == 0xcb || c[i] == 0xca) {
        return 1;
    }
    if (c[i] == 0xff && i + 1 < size) {
        int reg = (c[i + 1] >> 3) & 7;
        return reg >= 2 && reg <= 5;
    }
    return 0;
}

static void translated(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
    (void) id;
    uint64_t vaddr = qemu_plugin_tb_vaddr(tb);
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (vaddr >= USER_TOP) {
        qemu_plugin_register_vcpu_tb_exec_cb(tb, kernelBlockRan, QEMU_PLUGIN_CB_NO_REGS, (void *) (uintptr_t) n);
        return;
    }
    UserBlock *b = calloc(1, sizeof *b);
    if (!b) {
        abort();
    }
    b->vaddr = vaddr;
    b->insns = n;
    if (withCode) {
        b->code = hexCode(tb, n);
    }
    if (n) {
        struct qemu_plugin_insn *lastInsn = qemu_plugin_tb_get_insn(tb, n - 1);
        b->endsIndirect = indirect(qemu_plugin_insn_data(lastInsn), qemu_plugin_insn_size(lastInsn));
    }
    pthread_mutex_lock(&lock);
    if (nblocks == capacity) {
        capacity = capacity ? capacity * 2 : 1 << 16;
        blocks = realloc(blocks, capacity * sizeof *blocks);
        if (!blocks) {
            abort();
        }
    }
    blocks[nblocks++] = b;
    pthread_mutex_unlock(&lock);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, userBlockRan, QEMU_PLUGIN_CB_NO_REGS, b);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        if (qemu_plugin_insn_size(insn) == sizeof MARKER
                && memcmp(qemu_plugin_insn_data(insn), MARKER, sizeof MARKER) == 0) {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, markerRan, QEMU_PLUGIN_CB_NO_REGS, NULL);
        }
    }
}

static void exiting(qemu_plugin_id_t id, void *udata) {
    (void) id;
    (void) udata;
    fclose(out);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
    (void) info;
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            path = argv[i] + 4;
        } else if (strncmp(argv[i], "vcpus=", 6) == 0) {
            vcpus = (unsigned int) atoi(argv[i] + 6);
        } else if (strcmp(argv[i], "code=on") == 0) {
            withCode = 1;
        }
    }
    if (!path || vcpus < 1 || vcpus > MAX_VCPUS || !(out = fopen(path, "w"))) {
        fprintf(stderr, "insn-count-plugin: needs out=<file> and vcpus=1..%d\n", MAX_VCPUS);
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
    qemu_plugin_register_atexit_cb(id, exiting, NULL);
    return 0;
}
