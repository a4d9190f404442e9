/* The marker that insn-count-plugin.c reacts to: a 7-byte NOP with a displacement no compiler emits. */
void insn_marker(void) {
    __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0xef, 0xbe, 0xad, 0xde" ::: "memory");
}
