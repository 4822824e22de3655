// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * garbage_frames.c - allocations and descriptors made while %rbp holds no frame pointer, as
 * in code built without frame pointers (Debian's own binaries): a frame-pointer walk then
 * reads whatever %rbp points at as {next frame, return address}.
 *
 * alloc_with_rbp(size, rbp) and dup_with_rbp(fd, rbp) (assembly below, so nothing else
 * touches %rbp) call malloc(size) / dup(fd) with %rbp set to rbp, a fake frame in main()'s
 * stack frame (above the callee's, as a real one would be).  Its "return address" is one of:
 *   GARBAGE_TEXT   0x5344464554495257, text read off a stack ("WRITEFDS")
 *   GARBAGE_HEAP   a heap address whose 8 bytes before it encode a call (e8 rel32):
 *                  looks like a return address, lies in no executable mapping
 *   GARBAGE_CODE   not_after_call, in this program's code, after 8 nops: follows no call
 *   CHAIN          a real return address into main(), whose next frame is GARBAGE_TEXT
 * Each heap variant leaks 3 blocks of 40 bytes: a walk that keeps no garbage makes the first
 * three one site [alloc_with_rbp] of 9 blocks, 360 bytes, and CHAIN a site
 * [alloc_with_rbp, main] of 3 blocks, 120 bytes.  dup_with_rbp leaks 2 descriptors with
 * GARBAGE_TEXT and 1 with CHAIN: fd sites [dup_with_rbp] (2) and [dup_with_rbp, main] (1).
 * At least 13 walks stop at a frame that failed (the 12 allocations, the CHAIN dup).
 *
 * Usage: garbage_frames DIR: then creates DIR/done (holding its pid), waits for DIR/quit.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fd_common.h"

#define PER_VARIANT 3
#define BLOCK_BYTES 40
#define GARBAGE_TEXT 0x5344464554495257ULL

void *alloc_with_rbp(size_t size, const void *rbp);
int dup_with_rbp(int fd, const void *rbp);
extern const char not_after_call[];

/*
 * Entry: %rsp is 8 past a 16-byte boundary; the push realigns it for the call.  %rbp is
 * callee-saved: it is restored before returning.
 */
__asm__(".text\n"
	".globl alloc_with_rbp\n"
	".type alloc_with_rbp, @function\n"
	"alloc_with_rbp:\n"
	"	push %rbp\n"
	"	mov %rsi, %rbp\n"
	"	call malloc@PLT\n"
	"	pop %rbp\n"
	"	ret\n"
	".size alloc_with_rbp, .-alloc_with_rbp\n"
	".globl dup_with_rbp\n"
	".type dup_with_rbp, @function\n"
	"dup_with_rbp:\n"
	"	push %rbp\n"
	"	mov %rsi, %rbp\n"
	"	call dup@PLT\n"
	"	pop %rbp\n"
	"	ret\n"
	".size dup_with_rbp, .-dup_with_rbp\n"
	".globl not_after_call\n"
	".type not_after_call, @function\n"
	"	nop; nop; nop; nop; nop; nop; nop; nop\n"
	"not_after_call:\n"
	"	ret\n"
	".size not_after_call, .-not_after_call\n");

/* A fake frame as the walk reads it at %rbp. */
struct frame {
	uint64_t next;
	uint64_t ret;
};

static void *keep[4 * PER_VARIANT];

/* The return address of this call: a real one, into main(). */
static NOINLINE uint64_t return_address(void)
{
	return (uint64_t)__builtin_return_address(0);
}

int main(int argc, char **argv)
{
	/* [0]: the variant's frame; [1]: CHAIN's second frame, above the first. */
	struct frame frames[2];
	unsigned char *looks_like_code;
	uint64_t garbage[3];
	int k = 0;

	if (argc < 2)
		return 2;
	close_inherited();
	looks_like_code = malloc(64);
	if (!looks_like_code)
		return 2;
	memset(looks_like_code, 0, 64);
	looks_like_code[3] = 0xe8;			/* call rel32, ending at +8 */
	garbage[0] = GARBAGE_TEXT;
	garbage[1] = (uint64_t)(looks_like_code + 8);
	garbage[2] = (uint64_t)not_after_call;

	for (int v = 0; v < 3; v++) {
		frames[0].next = 0;
		frames[0].ret = garbage[v];
		for (int i = 0; i < PER_VARIANT; i++)
			keep[k++] = alloc_with_rbp(BLOCK_BYTES, &frames[0]);
	}
	frames[0].next = (uint64_t)&frames[1];
	frames[0].ret = return_address();
	frames[1].next = 0;
	frames[1].ret = GARBAGE_TEXT;
	for (int i = 0; i < PER_VARIANT; i++)
		keep[k++] = alloc_with_rbp(BLOCK_BYTES, &frames[0]);
	must(dup_with_rbp(0, &frames[0]));

	frames[0].next = 0;
	frames[0].ret = GARBAGE_TEXT;
	for (int i = 0; i < 2; i++)
		must(dup_with_rbp(0, &frames[0]));

	for (int i = 0; i < k; i++)
		if (!keep[i])
			return 2;
	handshake(argv[1], "done", "quit");
	return 0;
}
