// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * got_stub.c - weak stand-ins for the GOT redirection of an injected agent (got.c): a
 * preloaded agent interposes by symbol lookup and needs none, and the library links
 * whether or not got.c is built in.
 */
#include "agent/agent.h"

__attribute__((weak)) int agent_got_redirect(void)
{
	return 0;
}

__attribute__((weak)) void agent_got_restore(void)
{
}
