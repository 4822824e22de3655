// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_debpkg.c - which package owns a file, read from dpkg's database inside leaktop: the
 * pure text (lines joined across chunks, file-list names and lines, status stanzas and which
 * one answers for "name" or "name:arch"), then the reader on a database made here (owner,
 * not owned, source and architecture, merged /usr, no database, a symbolic link or a FIFO
 * for a file list, a question that joins a pass midway and goes round into the next).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "check.h"
#include "core/dpkgdb.h"
#include "live/debpkg.h"
#include "util/clock.h"

/* Every line of text, fed in pieces of `piece` bytes, joined with "|". */
static const char *lines_of(const char *text, size_t piece)
{
	static char out[8192];
	struct dpkgdb_lines l;
	size_t len = strlen(text), n = 0;
	const char *line;
	size_t line_len;

	dpkgdb_lines__reset(&l);
	out[0] = '\0';
	for (size_t at = 0; at < len; at += piece) {
		size_t size = len - at < piece ? len - at : piece, pos = 0;

		while (dpkgdb_lines__next(&l, text + at, size, &pos, &line, &line_len))
			n += snprintf(out + n, sizeof(out) - n, "%.*s|", (int)line_len, line);
	}
	if (dpkgdb_lines__end(&l, &line, &line_len))
		n += snprintf(out + n, sizeof(out) - n, "%.*s|", (int)line_len, line);
	return out;
}

static void test_lines_are_the_same_whatever_the_chunks(void)
{
	static const char text[] = "/.\n/usr\n/usr/lib/x86_64-linux-gnu/libc.so.6\n\nlast";

	for (size_t piece = 1; piece <= sizeof(text); piece++)
		CHECK_EQ_STR(lines_of(text, piece),
			     "/.|/usr|/usr/lib/x86_64-linux-gnu/libc.so.6||last|");
	CHECK_EQ_STR(lines_of("a\nb\n", 3), "a|b|");
	CHECK_EQ_STR(lines_of("", 3), "");
}

static void test_lines_longer_than_any_path_are_skipped_whole(void)
{
	static char text[3 * DPKGDB_LINE_MAX];

	memset(text, 'x', sizeof(text) - 1);
	memcpy(text, "/a\n", 3);
	memcpy(text + sizeof(text) - 4, "\n/b", 3);
	/* The long line, whole in one piece or split in many, is not a line. */
	CHECK_EQ_STR(lines_of(text, sizeof(text)), "/a|/b|");
	CHECK_EQ_STR(lines_of(text, 1000), "/a|/b|");
	CHECK_EQ_STR(lines_of(text, 7), "/a|/b|");
}

static void test_list_names_are_packages_as_dpkg_names_them(void)
{
	char pkg[DPKGDB_NAME_LEN];

	CHECK_EQ_INT(dpkgdb__list_package("libjansson4:amd64.list", pkg, sizeof(pkg)), 0);
	CHECK_EQ_STR(pkg, "libjansson4:amd64");
	CHECK_EQ_INT(dpkgdb__list_package("python3.11.list", pkg, sizeof(pkg)), 0);
	CHECK_EQ_STR(pkg, "python3.11");
	CHECK_EQ_INT(dpkgdb__list_package("libstdc++6:i386.list", pkg, sizeof(pkg)), 0);
	CHECK_EQ_STR(pkg, "libstdc++6:i386");
	CHECK_EQ_INT(dpkgdb__list_package("libc6:amd64.md5sums", pkg, sizeof(pkg)), -EINVAL);
	CHECK_EQ_INT(dpkgdb__list_package(".list", pkg, sizeof(pkg)), -EINVAL);
	CHECK_EQ_INT(dpkgdb__list_package("Libc6.list", pkg, sizeof(pkg)), -EINVAL);
	CHECK_EQ_INT(dpkgdb__list_package("-x.list", pkg, sizeof(pkg)), -EINVAL);
	CHECK_EQ_INT(dpkgdb__list_package("a:.list", pkg, sizeof(pkg)), -EINVAL);
	CHECK_EQ_INT(dpkgdb__list_package("a:b:c.list", pkg, sizeof(pkg)), -EINVAL);
	CHECK_EQ_INT(dpkgdb__list_package("a b.list", pkg, sizeof(pkg)), -EINVAL);
	CHECK_EQ_INT(dpkgdb__list_package("abc.list", pkg, 3), -EINVAL);
}

static void test_list_line_is_the_path_or_its_alias_exactly(void)
{
	static const char p[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	static const char a[] = "/lib/x86_64-linux-gnu/libc.so.6";

	CHECK(dpkgdb__list_line_is(p, strlen(p), p, a));
	CHECK(dpkgdb__list_line_is(a, strlen(a), p, a));
	CHECK(!dpkgdb__list_line_is(a, strlen(a), p, ""));
	CHECK(!dpkgdb__list_line_is(a, strlen(a), p, NULL));
	CHECK(!dpkgdb__list_line_is(p, strlen(p) - 1, p, a));		/* a prefix */
	CHECK(!dpkgdb__list_line_is("/usr/lib/x86_64-linux-gnu/libc.so.6.1", strlen(p) + 2, p, a));
	CHECK(!dpkgdb__list_line_is("/usr/lib/x86_64-linux-gnu", 25, p, a));
}

/* The stanzas of status text: the best for `package`'s "source arch", or "-" if none. */
static const char *answer_of(const char *status, const char *package)
{
	static char out[512];
	struct dpkgdb_stanza s;
	enum dpkgdb_rank best = DPKGDB_NO_MATCH, rank;
	const char *p = status, *nl;

	strcpy(out, "-");
	dpkgdb_stanza__reset(&s);
	for (;;) {
		nl = strchr(p, '\n');
		if (dpkgdb_stanza__line(&s, p, nl ? (size_t)(nl - p) : strlen(p)) ||
		    (!nl && dpkgdb_stanza__line(&s, "", 0))) {
			rank = dpkgdb_stanza__rank(&s, package);
			if (rank > best) {
				best = rank;
				snprintf(out, sizeof(out), "%s %s", dpkgdb_stanza__source(&s),
					 s.arch);
			}
			dpkgdb_stanza__reset(&s);
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return out;
}

static const char status_text[] =
	"Package: libc6\n"
	"Status: install ok installed\n"
	"Priority: optional\n"
	"Architecture: amd64\n"
	"Multi-Arch: same\n"
	"Source: glibc (2.36-9+deb12u4)\n"
	"Version: 2.36-9+deb12u4\n"
	"Description: GNU C Library: Shared libraries\n"
	" Contains the standard libraries that are used by nearly all programs on\n"
	" Source: not-a-field\n"
	"\n"
	"Package: libc6\n"
	"Status: install ok installed\n"
	"Architecture: i386\n"
	"Source: glibc\n"
	"\n"
	"Package: libjansson4\n"
	"Status: install ok installed\n"
	"Architecture: amd64\n"
	"Source: jansson\n"
	"\n"
	"package: python3.11\n"
	"status: install ok installed\n"
	"architecture: amd64\n"
	"\n"
	"Package: oldlib\n"
	"Status: deinstall ok config-files\n"
	"Architecture: amd64\n"
	"\n"
	"Package: gone\n"
	"Status: purge ok not-installed\n"
	"Architecture: amd64\n"
	"\n"
	"Package: twice\n"
	"Status: deinstall ok config-files\n"
	"Architecture: i386\n"
	"Source: old-twice\n"
	"\n"
	"Package: twice\n"
	"Status: install ok triggers-pending\n"
	"Architecture: amd64\n"
	"Source: twice-src\n"
	"\n"
	"Package: fonts-x\n"
	"Status: install ok installed\n"
	"Architecture: all\n"
	"Source: Bad_Name\n";

static void test_status_stanza_answers_source_and_arch(void)
{
	CHECK_EQ_STR(answer_of(status_text, "libc6:amd64"), "glibc amd64");
	CHECK_EQ_STR(answer_of(status_text, "libc6:i386"), "glibc i386");
	CHECK_EQ_STR(answer_of(status_text, "libjansson4:amd64"), "jansson amd64");
	CHECK_EQ_STR(answer_of(status_text, "libjansson4:arm64"), "-");
	CHECK_EQ_STR(answer_of(status_text, "libjansson"), "-");
	/* No Source: the package is its own source; field names in any case. */
	CHECK_EQ_STR(answer_of(status_text, "python3.11"), "python3.11 amd64");
	/* Not installed: only when nothing better; never one dpkg has forgotten. */
	CHECK_EQ_STR(answer_of(status_text, "oldlib"), "oldlib amd64");
	CHECK_EQ_STR(answer_of(status_text, "gone"), "-");
	CHECK_EQ_STR(answer_of(status_text, "twice"), "twice-src amd64");
	/* A Source that is no name is not taken: the package's own name stands in. */
	CHECK_EQ_STR(answer_of(status_text, "fonts-x"), "fonts-x all");
}

static void test_status_stanza_ends_at_blank_line_or_end(void)
{
	struct dpkgdb_stanza s;

	dpkgdb_stanza__reset(&s);
	CHECK(!dpkgdb_stanza__line(&s, "", 0));		/* blank lines between stanzas */
	CHECK(!dpkgdb_stanza__line(&s, " \t", 2));
	CHECK(!dpkgdb_stanza__line(&s, "Package:  libfoo1  ", 19));
	CHECK(!dpkgdb_stanza__line(&s, "Package-Type: udeb", 18));
	CHECK(!dpkgdb_stanza__line(&s, "Architecture:arm64", 18));
	CHECK(dpkgdb_stanza__line(&s, "  ", 2));
	CHECK_EQ_STR(s.package, "libfoo1");
	CHECK_EQ_STR(s.arch, "arm64");
	CHECK_EQ_STR(s.source, "");
	CHECK_EQ_INT(dpkgdb_stanza__rank(&s, "libfoo1:arm64"), DPKGDB_MATCH);	/* no Status */
	dpkgdb_stanza__reset(&s);
	/* A qualified or odd Package field is no package. */
	CHECK(!dpkgdb_stanza__line(&s, "Package: libfoo1:amd64", 22));
	CHECK_EQ_STR(s.package, "");
	CHECK(!dpkgdb_stanza__line(&s, "Package: a\x01", 11));
	CHECK_EQ_STR(s.package, "");
	CHECK_EQ_INT(dpkgdb_stanza__rank(&s, ""), DPKGDB_NO_MATCH);
}

/* The reader, on a database made here. */

static char dir[] = "/tmp/leaktop-test-debpkg.XXXXXX";

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int write_file(const char *sub, const char *text)
{
	char path[PATH_MAX];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* A file to ask about: its path into path, its identity into q by debpkg__init. */
static void ask(struct debpkg_query *q, const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		debpkg__init(q, NULL, 0, 0);
		return;
	}
	debpkg__init(q, path, st.st_dev, st.st_ino);
}

/* Step q on db until it is answered (a bound on the time taken). */
static bool answer(struct debpkg_query *q, struct debpkg_db *db)
{
	for (int i = 0; i < 100000; i++) {
		struct debpkg_query *const one[] = { q };

		if (debpkg__step(q, monotonic_ns(), db))
			return true;
		debpkg__wait(one, 1, monotonic_ns() + 1000000);
	}
	return false;
}

static int make_db(const char *admin)
{
	char path[PATH_MAX], list[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, admin);
	if (mkdir(path, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/%s/info", dir, admin);
	if (mkdir(path, 0755))
		return -errno;
	snprintf(path, sizeof(path), "%s/files", dir);
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	/* Files a.so and b.so (owned), c.so (not owned), d.so (only a symbolic link has it). */
	if (write_file("files/a.so", "a") || write_file("files/b.so", "b") ||
	    write_file("files/c.so", "c") || write_file("files/d.so", "d"))
		return -EIO;
	snprintf(list, sizeof(list), "/.\n%s/files\n%s/files/a.so\n%s/files/a.so.1\n", dir, dir,
		 dir);
	snprintf(path, sizeof(path), "%s/info/liba1:amd64.list", admin);
	if (write_file(path, list))
		return -EIO;
	/* No "\n" after the last line. */
	snprintf(list, sizeof(list), "/.\n%s/files\n%s/files/b.so", dir, dir);
	snprintf(path, sizeof(path), "%s/info/bprog.list", admin);
	if (write_file(path, list))
		return -EIO;
	snprintf(list, sizeof(list), "%s/files/d.so\n", dir);
	if (write_file("elsewhere.list", list))
		return -EIO;
	snprintf(path, sizeof(path), "%s/%s/info/dlink.list", dir, admin);
	snprintf(list, sizeof(list), "%s/elsewhere.list", dir);
	if (symlink(list, path))
		return -errno;
	snprintf(path, sizeof(path), "%s/%s/info/fifo.list", dir, admin);
	if (mkfifo(path, 0644))
		return -errno;
	/* Not file lists. */
	snprintf(path, sizeof(path), "%s/info/liba1:amd64.md5sums", admin);
	if (write_file(path, list))
		return -EIO;
	snprintf(path, sizeof(path), "%s/status", admin);
	return write_file(path,
			  "Package: liba1\nStatus: install ok installed\nArchitecture: amd64\n"
			  "Source: liba (1.0-1)\nDescription: a\n a.\n\n"
			  "Package: bprog\nStatus: install ok installed\nArchitecture: all\n");
}

static void test_reader_answers_owner_source_and_arch(void)
{
	struct debpkg_db *db;
	struct debpkg_query q;
	char admin[PATH_MAX], path[PATH_MAX];

	CHECK_EQ_INT(make_db("db1"), 0);
	snprintf(admin, sizeof(admin), "%s/db1", dir);
	CHECK_EQ_INT(debpkg_db__new(&db, admin), 0);

	snprintf(path, sizeof(path), "%s/files/a.so", dir);
	ask(&q, path);
	CHECK(answer(&q, db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(q.package, "liba1:amd64");
	CHECK_EQ_STR(q.source, "liba");
	CHECK_EQ_STR(q.arch, "amd64");

	/* The last line of a list without its "\n"; no Source: the package's own name. */
	snprintf(path, sizeof(path), "%s/files/b.so", dir);
	ask(&q, path);
	CHECK(answer(&q, db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(q.package, "bprog");
	CHECK_EQ_STR(q.source, "bprog");
	CHECK_EQ_STR(q.arch, "all");

	snprintf(path, sizeof(path), "%s/files/c.so", dir);
	ask(&q, path);
	CHECK(answer(&q, db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_NOT_OWNED);
	CHECK_EQ_STR(q.package, "");

	/* A list that is a symbolic link (or a FIFO) is not read. */
	snprintf(path, sizeof(path), "%s/files/d.so", dir);
	ask(&q, path);
	CHECK(answer(&q, db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_NOT_OWNED);
	debpkg_db__free(db);
}

static void test_reader_owner_without_status_has_no_source(void)
{
	struct debpkg_db *db;
	struct debpkg_query q;
	char path[PATH_MAX];

	CHECK_EQ_INT(make_db("db2"), 0);
	snprintf(path, sizeof(path), "%s/db2/status", dir);
	CHECK_EQ_INT(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/db2", dir);
	CHECK_EQ_INT(debpkg_db__new(&db, path), 0);
	snprintf(path, sizeof(path), "%s/files/a.so", dir);
	ask(&q, path);
	CHECK(answer(&q, db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(q.package, "liba1:amd64");
	CHECK_EQ_STR(q.source, "");
	CHECK_EQ_STR(q.arch, "");
	debpkg_db__free(db);
}

static void test_reader_without_database_or_file_answers_unknown(void)
{
	struct debpkg_db *db;
	struct debpkg_query q;
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/no-such-db", dir);
	CHECK_EQ_INT(debpkg_db__new(&db, path), 0);
	snprintf(path, sizeof(path), "%s/files/a.so", dir);
	ask(&q, path);
	CHECK(answer(&q, db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_UNKNOWN);
	/* Another file than the process mapped, a control character: never asked. */
	CHECK_EQ_INT(stat(path, &st), 0);
	debpkg__init(&q, path, st.st_dev, st.st_ino + 1);
	CHECK(debpkg__step(&q, monotonic_ns(), db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_UNKNOWN);
	debpkg__init(&q, "/tmp/a\nb", st.st_dev, st.st_ino);
	CHECK(debpkg__step(&q, monotonic_ns(), db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_UNKNOWN);
	debpkg__init(&q, "relative", st.st_dev, st.st_ino);
	CHECK(debpkg__step(&q, monotonic_ns(), NULL));
	CHECK_EQ_INT(q.lookup, SYM_PKG_UNKNOWN);
	debpkg_db__free(db);
}

/* Under merged /usr, dpkg lists libc under /lib; the kernel shows it under /usr/lib. */
static void test_reader_finds_merged_usr_alias(void)
{
	static const char libc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	struct debpkg_db *db;
	struct debpkg_query q;
	char path[PATH_MAX];

	CHECK_EQ_INT(mkdir(strcat(strcpy(path, dir), "/db3"), 0755), 0);
	CHECK_EQ_INT(mkdir(strcat(path, "/info"), 0755), 0);
	CHECK_EQ_INT(write_file("db3/info/libc6:amd64.list", "/.\n/lib\n/lib/x86_64-linux-gnu\n"
				"/lib/x86_64-linux-gnu/libc.so.6\n"), 0);
	CHECK_EQ_INT(write_file("db3/status", "Package: libc6\nStatus: install ok installed\n"
				"Architecture: amd64\nSource: glibc\n"), 0);
	snprintf(path, sizeof(path), "%s/db3", dir);
	CHECK_EQ_INT(debpkg_db__new(&db, path), 0);
	ask(&q, libc);
	CHECK(answer(&q, db));
	CHECK_EQ_INT(q.lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(q.package, "libc6:amd64");
	CHECK_EQ_STR(q.source, "glibc");
	debpkg_db__free(db);
}

/*
 * Lists p00..p19, list pNN naming file fNN (f05 owned by none: p05 names another).  Questions
 * that join once p10 was opened find f15 in this pass, go round to p03 for f03, and are said
 * not owned only back at p11 (p10 was read partly); one that joined at the start is answered
 * at the pass's end.
 */
static void test_reader_question_joining_midway_goes_round(void)
{
	struct debpkg_query *q[4];
	struct debpkg_db *db;
	char path[PATH_MAX], text[PATH_MAX + 8];

	CHECK_EQ_INT(mkdir(strcat(strcpy(path, dir), "/db4"), 0755), 0);
	CHECK_EQ_INT(mkdir(strcat(path, "/info"), 0755), 0);
	CHECK_EQ_INT(mkdir(strcat(strcpy(path, dir), "/round"), 0755), 0);
	for (int i = 0; i < 20; i++) {
		char sub[64];

		snprintf(sub, sizeof(sub), "round/f%02d", i);
		CHECK_EQ_INT(write_file(sub, "x"), 0);
		snprintf(sub, sizeof(sub), "db4/info/p%02d.list", i);
		snprintf(text, sizeof(text), "/.\n%s/round/f%02d\n", dir, i == 5 ? 99 : i);
		CHECK_EQ_INT(write_file(sub, text), 0);
	}
	CHECK_EQ_INT(write_file("db4/status", "Package: p03\nStatus: install ok installed\n"
				"Architecture: amd64\nSource: three\n"), 0);
	snprintf(path, sizeof(path), "%s/db4", dir);
	CHECK_EQ_INT(debpkg_db__new(&db, path), 0);
	for (int i = 0; i < 4; i++)
		CHECK((q[i] = calloc(1, sizeof(*q[i]))) != NULL);
	snprintf(path, sizeof(path), "%s/round/f05", dir);
	ask(q[0], path);				/* not owned, from the start */
	debpkg__join(q[0], db);
	/* Open the directory, list it; open, read, end p00..p09; open p10. */
	debpkg_db__read(db, 2 + 3 * 10 + 1);
	CHECK_EQ_INT(q[0]->lookup, SYM_PKG_UNKNOWN);
	snprintf(path, sizeof(path), "%s/round/f03", dir);
	ask(q[1], path);				/* behind: found in the next pass */
	snprintf(path, sizeof(path), "%s/round/f05", dir);
	ask(q[2], path);				/* not owned, joined midway */
	snprintf(path, sizeof(path), "%s/round/f15", dir);
	ask(q[3], path);				/* ahead: found in this pass */
	for (int i = 1; i < 4; i++)
		debpkg__join(q[i], db);
	debpkg_db__read(db, 2 + 3 * 9 + 1);	/* read p10; p11..p19; the end of the pass */
	CHECK_EQ_INT(q[0]->lookup, SYM_PKG_NOT_OWNED);
	CHECK_EQ_INT(q[3]->lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(q[3]->package, "p15");
	CHECK_EQ_INT(q[1]->lookup, SYM_PKG_UNKNOWN);	/* not yet */
	CHECK_EQ_INT(q[2]->lookup, SYM_PKG_UNKNOWN);
	debpkg_db__read(db, 2 + 3 * 10);	/* open and list again; p00..p09 */
	CHECK_EQ_INT(q[1]->lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(q[1]->package, "p03");
	CHECK_EQ_STR(q[1]->source, "three");
	debpkg_db__read(db, 3);			/* p10 again: it was open when they joined */
	CHECK_EQ_INT(q[2]->lookup, SYM_PKG_UNKNOWN);
	debpkg_db__read(db, 1);			/* p11, where they joined: a whole round */
	CHECK_EQ_INT(q[2]->lookup, SYM_PKG_NOT_OWNED);
	CHECK_EQ_INT(q[3]->lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(q[3]->source, "");			/* no stanza: no source */
	for (int i = 0; i < 4; i++)
		debpkg__cancel(q[i]);
	/* A question given up leaves the database's lists. */
	ask(q[0], path);
	debpkg__join(q[0], db);
	debpkg__cancel(q[0]);
	CHECK_EQ_INT(q[0]->lookup, SYM_PKG_UNKNOWN);
	for (int i = 0; i < 4; i++)
		free(q[i]);
	debpkg_db__free(db);
}

/*
 * bb's stanza (config-files: not installed) comes first in status, cc's and aa's last, after
 * enough others for many chunks.  aa is owned first and starts a pass over status; bb and
 * cc are owned while that pass is under way: cc finds its stanza in it; bb, whose stanza was
 * passed, reads the next pass only up to where it joined.
 */
static void test_reader_source_question_joining_midway_goes_round(void)
{
	struct debpkg_query *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct debpkg_query *c = calloc(1, sizeof(*c));
	struct debpkg_db *db = NULL;
	char path[PATH_MAX], *status = malloc(1 << 20);
	size_t n = 0;
	int rounds = 0;

	CHECK(a && b && c && status);
	CHECK_EQ_INT(mkdir(strcat(strcpy(path, dir), "/db5"), 0755), 0);
	CHECK_EQ_INT(mkdir(strcat(path, "/info"), 0755), 0);
	CHECK_EQ_INT(write_file("files/aa", "a"), 0);
	CHECK_EQ_INT(write_file("files/bb", "b"), 0);
	snprintf(path, sizeof(path), "%s/files/aa\n", dir);
	CHECK_EQ_INT(write_file("db5/info/aa.list", path), 0);
	snprintf(path, sizeof(path), "%s/files/bb\n", dir);
	CHECK_EQ_INT(write_file("db5/info/bb.list", path), 0);
	CHECK_EQ_INT(write_file("files/cc", "c"), 0);
	snprintf(path, sizeof(path), "%s/files/cc\n", dir);
	CHECK_EQ_INT(write_file("db5/info/cc.list", path), 0);
	n += snprintf(status + n, 1000, "Package: bb\nStatus: deinstall ok config-files\n"
		      "Architecture: amd64\nSource: bsrc\n\n");
	for (int i = 0; i < 10000; i++)
		n += snprintf(status + n, 1000, "Package: filler%d\nStatus: install ok installed\n"
			      "Architecture: amd64\n\n", i);
	n += snprintf(status + n, 1000, "Package: cc\nStatus: install ok installed\n"
		      "Architecture: amd64\nSource: csrc\n\n");
	snprintf(status + n, 1000, "Package: aa\nStatus: install ok installed\n"
		 "Architecture: amd64\nSource: asrc\n");
	CHECK(n > 8 * 64 * 1024);
	CHECK_EQ_INT(write_file("db5/status", status), 0);
	snprintf(path, sizeof(path), "%s/db5", dir);
	CHECK_EQ_INT(debpkg_db__new(&db, path), 0);
	snprintf(path, sizeof(path), "%s/files/aa", dir);
	ask(a, path);
	snprintf(path, sizeof(path), "%s/files/bb", dir);
	ask(b, path);
	snprintf(path, sizeof(path), "%s/files/cc", dir);
	ask(c, path);
	debpkg__join(a, db);
	debpkg__join(b, db);
	debpkg__join(c, db);
	while (!a->source[0] && rounds++ < 1000)
		debpkg_db__read(db, 1);
	CHECK_EQ_STR(a->source, "asrc");
	CHECK_EQ_INT(b->lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(b->source, "");			/* not answered yet */
	CHECK_EQ_STR(c->source, "csrc");
	/* Open, and a few chunks: past where bb joined, far from the end.  Answered. */
	debpkg_db__read(db, 5);
	debpkg__cancel(b);
	CHECK_EQ_INT(b->lookup, SYM_PKG_OWNED);
	CHECK_EQ_STR(b->source, "bsrc");
	CHECK_EQ_STR(b->arch, "amd64");
	debpkg__cancel(a);
	debpkg__cancel(c);
	debpkg_db__free(db);
	free(a);
	free(b);
	free(c);
	free(status);
}

int main(void)
{
	RUN(test_lines_are_the_same_whatever_the_chunks);
	RUN(test_lines_longer_than_any_path_are_skipped_whole);
	RUN(test_list_names_are_packages_as_dpkg_names_them);
	RUN(test_list_line_is_the_path_or_its_alias_exactly);
	RUN(test_status_stanza_answers_source_and_arch);
	RUN(test_status_stanza_ends_at_blank_line_or_end);
	if (!mkdtemp(dir)) {
		printf("FAIL test_debpkg: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	RUN(test_reader_answers_owner_source_and_arch);
	RUN(test_reader_owner_without_status_has_no_source);
	RUN(test_reader_without_database_or_file_answers_unknown);
	RUN(test_reader_finds_merged_usr_alias);
	RUN(test_reader_question_joining_midway_goes_round);
	RUN(test_reader_source_question_joining_midway_goes_round);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	CHECK_EXIT();
}
