// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_mounts.c - unit tests of user/live/mounts.c: mountinfo lines parsed to mount id,
 * device, type and mount point (optional fields, escapes, malformed lines), the table of
 * file systems leaktop never reads (FUSE and its subtypes, network file systems), and the
 * lookup of a file's file system from a descriptor of this process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "live/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void test_mountinfo_line_gives_id_device_type_and_point(void)
{
	const char *line = "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root "
			   "rw,errors=continue";
	struct mount_entry e;
	char point[64];

	CHECK_EQ_INT(mounts__parse_line(line, &e, point, sizeof(point)), 0);
	CHECK_EQ_INT(e.mnt_id, 36);
	CHECK_EQ_INT(e.dev, makedev(98, 0));
	CHECK_EQ_STR(e.fstype, "ext3");
	CHECK_EQ_STR(point, "/mnt2");
}

static void test_mountinfo_fuse_subtype_without_optional_fields(void)
{
	const char *line = "42 26 0:38 / /home/u/mnt rw,nosuid,nodev,relatime - fuse.stall_fs "
			   "stall_fs rw,user_id=65534,group_id=65534,allow_other";
	struct mount_entry e;
	char point[64];

	CHECK_EQ_INT(mounts__parse_line(line, &e, point, sizeof(point)), 0);
	CHECK_EQ_INT(e.mnt_id, 42);
	CHECK_EQ_INT(e.dev, makedev(0, 38));
	CHECK_EQ_STR(e.fstype, "fuse.stall_fs");
	CHECK_EQ_STR(point, "/home/u/mnt");
}

static void test_mountinfo_point_escapes_are_undone(void)
{
	const char *line = "50 26 0:40 / /home/u/my\\040dir\\134x rw - fuse.sshfs u@h:/ rw";
	struct mount_entry e;
	char point[64];

	CHECK_EQ_INT(mounts__parse_line(line, &e, point, sizeof(point)), 0);
	CHECK_EQ_STR(point, "/home/u/my dir\\x");
	CHECK_EQ_STR(e.fstype, "fuse.sshfs");
}

static void test_mountinfo_malformed_lines_are_refused(void)
{
	struct mount_entry e;
	char point[16];

	CHECK_EQ_INT(mounts__parse_line("", &e, NULL, 0), -EINVAL);
	CHECK_EQ_INT(mounts__parse_line("36 35 98:0 / /mnt rw master:1 ext3 /dev/root rw", &e,
					NULL, 0), -EINVAL);
	CHECK_EQ_INT(mounts__parse_line("x 35 98:0 / /mnt rw - ext3 /dev/root rw", &e, NULL, 0),
		     -EINVAL);
	CHECK_EQ_INT(mounts__parse_line("36 35 98:0 / /mnt rw - ", &e, NULL, 0), -EINVAL);
	CHECK_EQ_INT(mounts__parse_line("36 35 98:0 / /a/very/long/mount/point rw - ext4 x rw",
					&e, point, sizeof(point)), -ENAMETOOLONG);
}

static void test_mountinfo_long_type_is_cut_to_fit(void)
{
	struct mount_entry e;

	CHECK_EQ_INT(mounts__parse_line("7 1 0:9 / /m rw - fuse.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
					"aaaa x rw", &e, NULL, 0), 0);
	CHECK_EQ_INT(strlen(e.fstype), sizeof(e.fstype) - 1);
	CHECK(mounts__refusal(e.fstype) != NULL);
}

static void test_refusal_table_refuses_fuse_and_network_file_systems(void)
{
	static const char *const refused[] = {
		"fuse", "fuseblk", "fuse.sshfs", "fuse.stall_fs", "fuse.gvfsd-fuse", "nfs",
		"nfs4", "cifs", "smb3", "9p", "ceph", "glusterfs", "afs", "lustre",
	};
	static const char *const allowed[] = {
		"ext4", "xfs", "btrfs", "tmpfs", "overlay", "proc", "squashfs", "virtiofs",
		"fusectl", "nfsd", "",
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CHECK(mounts__refusal(refused[i]) != NULL);
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		CHECK(mounts__refusal(allowed[i]) == NULL);
	CHECK_EQ_STR(mounts__refusal("fuse.sshfs"), "FUSE");
	CHECK_EQ_STR(mounts__refusal("nfs4"), "network file system");
}

static void test_file_on_local_file_system_is_allowed(void)
{
	int fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);

	CHECK(fd >= 0);
	CHECK_EQ_INT(mounts__check_fd(getpid(), fd), 0);
	CHECK_EQ_INT(mounts__check_fd(0, fd), 0);
	CHECK_EQ_INT(mounts__check_path(getpid(), "/usr/lib"), 0);
	CHECK_EQ_INT(mounts__check_path(0, "/a/../b"), -EINVAL);
	CHECK_EQ_INT(mounts__refused_count(), 0);
	close(fd);
	mounts__reset();
}

int main(void)
{
	RUN(test_mountinfo_line_gives_id_device_type_and_point);
	RUN(test_mountinfo_fuse_subtype_without_optional_fields);
	RUN(test_mountinfo_point_escapes_are_undone);
	RUN(test_mountinfo_malformed_lines_are_refused);
	RUN(test_mountinfo_long_type_is_cut_to_fit);
	RUN(test_refusal_table_refuses_fuse_and_network_file_systems);
	RUN(test_file_on_local_file_system_is_allowed);
	CHECK_EXIT();
}
