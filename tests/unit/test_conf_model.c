/* Config loading end to end (conf_model.c): the seed's scst.conf, HANDLER/DEVICE rules,
 * top-level attributes, order independence, CRLF and quoting, open at --check=full, every
 * every conf/ example, and a mutation loop that must never crash the loader. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/conf_test_util.h"

/* /work/shared/seeds/001_04dba34fe727cdd4.txt, the scst.conf as published. */
static const char seed001[] = "HANDLER vdisk_fileio {\n"
			      "DEVICE dev-srp0 {\n"
			      "filename /vdisk/srp0.img\n"
			      "}\n"
			      "}\n"
			      "\n"
			      "TARGET_DRIVER copy_manager {\n"
			      "TARGET copy_manager_tgt {\n"
			      "LUN 0 dev-srp0\n"
			      "}\n"
			      "}\n"
			      "\n"
			      "TARGET_DRIVER ib_srpt {\n"
			      "enabled 1\n"
			      "TARGET fe80:0000:0000:0000:0002:c903:000f:41a7 {\n"
			      "enabled 1\n"
			      "rel_tgt_id 1\n"
			      "LUN 0 dev-srp0\n"
			      "}\n"
			      "\n"
			      "TARGET fe80:0000:0000:0000:0002:c903:000f:8395 {\n"
			      "enabled 1\n"
			      "rel_tgt_id 2\n"
			      "LUN 0 dev-srp0\n"
			      "}\n"
			      "}\n";

Test(conf_model, seed_001_loads_as_is)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(seed001, &c, &d);

	assert_loads(cfg, c, 0);
	cr_assert_eq(cfg->ndevices, 1);
	cr_assert_str_eq(cfg->devices[0].name, "dev-srp0");
	cr_assert_str_eq(cfg->devices[0].handler, "vdisk_fileio");
	cr_assert_str_eq(tgt_attr_get(&cfg->devices[0].attrs, "filename"), "/vdisk/srp0.img");
	cr_assert_not_null(cfg->devices[0].dev);
	cr_assert_eq(cfg->ndrivers, 2);

	const struct tgt_driver *cm = tgt_config_driver(cfg, "copy_manager");
	cr_assert(cm && cm->known && cm->enabled);
	cr_assert_eq(cm->ntargets, 1);
	cr_assert(cm->targets[0].enabled, "copy_manager targets are always enabled");
	cr_assert_eq(cm->targets[0].rel_tgt_id, 3, "lowest rel_tgt_id not taken by 1 and 2");
	cr_assert_eq(cm->targets[0].rel_tgt_id_line, 0);

	const struct tgt_driver *srp = tgt_config_driver(cfg, "ib_srpt");
	cr_assert(srp && srp->known && srp->enabled);
	cr_assert_eq(srp->ntargets, 2);
	const struct tgt_target *t1 =
	    tgt_driver_target(srp, "fe80:0000:0000:0000:0002:c903:000f:41a7");
	const struct tgt_target *t2 =
	    tgt_driver_target(srp, "fe80:0000:0000:0000:0002:c903:000f:8395");
	cr_assert(t1 && t2);
	cr_assert(t1->enabled && t2->enabled);
	cr_assert_eq(t1->rel_tgt_id, 1);
	cr_assert_eq(t1->rel_tgt_id_line, 17);
	cr_assert_eq(t2->rel_tgt_id, 2);
	cr_assert_eq(t1->table.n, 1);
	cr_assert_eq(t1->table.e[0].lun, 0);
	cr_assert_eq(t1->table.e[0].dev, cfg->devices[0].dev);
	cr_assert_eq(t2->table.e[0].dev, cfg->devices[0].dev, "one LU behind both ports");
	tgt_config_free(cfg);
}

Test(conf_model, seed_001_with_crlf_loads_the_same)
{
	char crlf[sizeof(seed001) * 2];
	size_t o = 0;
	for (const char *p = seed001; *p; p++) {
		if (*p == '\n')
			crlf[o++] = '\r';
		crlf[o++] = *p;
	}
	crlf[o] = '\0';
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(crlf, &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_eq(tgt_config_driver(cfg, "ib_srpt")->targets[1].rel_tgt_id_line, 23);
	tgt_config_free(cfg);
}

Test(conf_model, order_independent_lun_before_device)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER iscsi {\n"
					  "\tTARGET iqn.2026-01.org.example:t {\n"
					  "\t\tenabled 1\n"
					  "\t\tLUN 0 later\n"
					  "\t}\n"
					  "}\n"
					  "HANDLER vdisk_nullio {\n"
					  "\tDEVICE later\n"
					  "}\n",
					  &c, &d);
	assert_loads(cfg, c, 0);
	const struct tgt_target *t = &cfg->drivers[0].targets[0];
	cr_assert_eq(t->luns[0].dev, &cfg->devices[0]);
	cr_assert_eq(t->table.e[0].dev, cfg->devices[0].dev);
	tgt_config_free(cfg);
}

Test(conf_model, quotes_escapes_and_multiword_values)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("HANDLER vdisk_fileio {\n"
					  "\tDEVICE \"d 0\" {\n"
					  "\t\tfilename \"/tmp/with space/a\\#b.img\"\n"
					  "\t\tprod_id \"x\\\"y\"\n"
					  "\t}\n"
					  "}\n"
					  "TARGET_DRIVER iscsi {\n"
					  "\tIncomingUser joe 12charsecret\n"
					  "\tIncomingUser \"fred 12charsecret2\"\n"
					  "\tTARGET t {\n\t\tenabled 1\n\t\tLUN 0 \"d 0\"\n\t}\n"
					  "}\n",
					  &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_str_eq(cfg->devices[0].name, "d 0");
	cr_assert_str_eq(tgt_attr_get(&cfg->devices[0].attrs, "filename"),
			 "/tmp/with space/a#b.img");
	cr_assert_str_eq(tgt_attr_get(&cfg->devices[0].attrs, "prod_id"), "x\"y");
	const char *users[4];
	cr_assert_eq(tgt_attr_get_all(&cfg->drivers[0].attrs, "IncomingUser", users, 4), 2);
	cr_assert_str_eq(users[0], "joe 12charsecret");
	cr_assert_str_eq(users[1], "fred 12charsecret2");
	tgt_config_free(cfg);
}

Test(conf_model, handler_blocks_may_repeat)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("HANDLER ramdisk {\n DEVICE a { size_mb 1 }\n}\n"
					  "HANDLER vdisk_nullio {\n DEVICE b\n}\n"
					  "HANDLER ramdisk {\n DEVICE c { size 4096 }\n}\n",
					  &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_eq(cfg->ndevices, 3);
	cr_assert_str_eq(tgt_config_device(cfg, "c")->handler, "ramdisk");
	tgt_config_free(cfg);
}

Test(conf_model, scst_kernel_only_top_level_attributes_are_warnings)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("setup_id 0x1234\nmax_tasklet_cmd 10\n" RAM_D0, &c, &d);
	assert_loads(cfg, c, 2);
	cr_assert(cap_has(&c, false, 1,
			  "attribute 'setup_id' only means something to SCST's "
			  "kernel; kept, not used by utgt"),
		  "%s", cap_dump(&c));
	cr_assert_str_eq(tgt_attr_get(&cfg->globals, "setup_id"), "0x1234", "kept in the model");
	tgt_config_free(cfg);
}

Test(conf_model, nonkey_read_only_attributes_are_accepted)
{
	struct captured c;
	struct diag d;
	/* the shape 'scstadmin -write_config -nonkey' produces */
	struct tgt_config *cfg = load_str("# Automatically generated by SCST Configurator v3.\n"
					  "\n"
					  "# Non-key attributes\n"
					  "version 3.7.0\n"
					  "\n"
					  "HANDLER ramdisk {\n"
					  "\tDEVICE d0 {\n"
					  "\t\tsize_mb 1\n"
					  "\n"
					  "\t\t# Non-key attributes\n"
					  "\t\ttype 0\n"
					  "\t\tthreads_num 1\n"
					  "\t}\n"
					  "}\n"
					  "TARGET_DRIVER iscsi {\n"
					  "\tenabled 1\n"
					  "\t# Non-key attributes\n"
					  "\topen_state 1\n"
					  "\tTARGET iqn.x:t {\n"
					  "\t\tenabled 1\n"
					  "\t\tLUN 0 d0\n"
					  "\t\t# Non-key attributes\n"
					  "\t\ttid 1\n"
					  "\t\taddr_method PERIPHERAL\n"
					  "\t}\n"
					  "}\n",
					  &c, &d);
	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert_eq(cap_count(&c, true), 0);
	cr_assert(cap_has(&c, false, 4,
			  "attribute 'version' is read-only in SCST ('scstadmin "
			  "-write_config -nonkey' writes it); kept, not used"),
		  "%s", cap_dump(&c));
	cr_assert(cap_has(&c, false, 23,
			  "attribute 'tid' is read-only in SCST ('scstadmin "
			  "-write_config -nonkey' writes it); kept, not used"),
		  "%s", cap_dump(&c));
	cr_assert(cap_has(&c, false, 24,
			  "attribute 'addr_method' only means something to SCST's "
			  "kernel; kept, not used by utgt"),
		  "%s", cap_dump(&c));
	tgt_config_free(cfg);
}

Test(conf_model, unknown_target_driver_is_a_warning_and_kept)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(RAM_D0 "TARGET_DRIVER qla2x00t {\n"
						 "\tTARGET 25:00:00:f0:98:87:92:f3 {\n"
						 "\t\tHW_TARGET\n"
						 "\t\tenabled 1\n"
						 "\t\texplicit_confirmation 1\n"
						 "\t\tLUN 0 d0\n"
						 "\t}\n"
						 "}\n",
					  &c, &d);
	assert_loads(cfg, c, 1);
	cr_assert(cap_has(&c, false, 6,
			  "unknown target driver 'qla2x00t': kept in the "
			  "configuration, not served by utgt"),
		  "%s", cap_dump(&c));
	const struct tgt_driver *q = tgt_config_driver(cfg, "qla2x00t");
	cr_assert(q && !q->known && !q->transport);
	cr_assert(q->targets[0].hw_target);
	cr_assert_str_eq(tgt_attr_get(&q->targets[0].attrs, "explicit_confirmation"), "1");
	tgt_config_free(cfg);
}

Test(conf_model, other_unknown_drivers_are_warnings_too)
{
	static const char *const drivers[] = {"csio_tgt", "fcst", "scst_local", "isert_scst"};
	for (size_t i = 0; i < sizeof(drivers) / sizeof(drivers[0]); i++) {
		char text[256];
		char want[160];
		struct captured c;
		struct diag d;
		snprintf(text, sizeof(text),
			 "TARGET_DRIVER %s {\n TARGET x {\n session_name y\n }\n}\n", drivers[i]);
		struct tgt_config *cfg = load_str(text, &c, &d);
		snprintf(
		    want, sizeof(want),
		    "unknown target driver '%s': kept in the configuration, not served by utgt",
		    drivers[i]);
		cr_assert_not_null(cfg, "%s", cap_dump(&c));
		cr_assert(cap_has(&c, false, 1, want), "%s", cap_dump(&c));
		tgt_config_free(cfg);
	}
}

Test(conf_model, device_errors_come_from_the_device_layer_with_lines)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("HANDLER vdisk_fileio {\n"
					  "\tDEVICE d0 {\n"
					  "\t\tfilename /tmp/x.img\n"
					  "\t\tblocksize 1000\n"
					  "\t}\n"
					  "}\n",
					  &c, &d);
	int line;
	cr_assert_null(cfg);
	cr_assert_not_null(cap_first_error(&c, &line));
	cr_assert_eq(line, 4, "%s", cap_dump(&c));
	cr_assert(strstr(cap_first_error(&c, NULL), "blocksize"), "%s", cap_dump(&c));
}

Test(conf_model, open_devices_reports_missing_backing_file_at_its_line)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(seed001, &c, &d);
	assert_loads(cfg, c, 0);
	if (access("/vdisk/srp0.img", F_OK) == 0)
		cr_skip_test("/vdisk/srp0.img exists on this machine");
	cr_assert_eq(tgt_config_open_devices(cfg, &d), -1);
	int line;
	const char *msg = cap_first_error(&c, &line);
	cr_assert_not_null(msg);
	cr_assert_eq(line, 3, "the filename line: %s", cap_dump(&c));
	cr_assert(!strncmp(msg, "DEVICE dev-srp0: ", 17), "%s", msg);
	cr_assert(strstr(msg, "/vdisk/srp0.img"), "%s", msg);
	tgt_config_free(cfg);
}

Test(conf_model, open_devices_opens_them)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(RAM_D0, &c, &d);
	assert_loads(cfg, c, 0);
	cr_assert_eq(tgt_config_open_devices(cfg, &d), 0, "%s", cap_dump(&c));
	cr_assert(cfg->devices[0].dev->open);
	cr_assert_eq(cfg->devices[0].dev->nr_blocks, 2048);
	tgt_config_free(cfg);
}

Test(conf_model, load_from_file_and_missing_file)
{
	char path[] = "/tmp/utgt-conf-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, seed001, sizeof(seed001) - 1), (ssize_t)sizeof(seed001) - 1);
	close(fd);
	struct captured c;
	struct diag d = cap_diag(&c);
	d.file = NULL;
	struct tgt_config *cfg = tgt_config_load(path, &d);
	assert_loads(cfg, c, 0);
	cr_assert_str_eq(cfg->path, path);
	cr_assert_str_eq(d.file, path);
	tgt_config_free(cfg);
	unlink(path);

	d = cap_diag(&c);
	cr_assert_null(tgt_config_load(path, &d));
	cr_assert(cap_has(&c, true, 0, "cannot open: No such file or directory"), "%s",
		  cap_dump(&c));
}

/* What 'scstadmin -write_config -nonkey' writes for a small SCST 3.x setup. */
static const char nonkey_conf[] = "# Automatically generated by SCST Configurator v3.7.0.\n"
				  "\n"
				  "# Non-key attributes\n"
				  "max_tasklet_cmd 10\n"
				  "poll_us 0\n"
				  "setup_id 0x0\n"
				  "suspend 0\n"
				  "threads 2\n"
				  "\n"
				  "HANDLER vdisk_fileio {\n"
				  "\tDEVICE disk01 {\n"
				  "\t\tfilename /var/tmp/utgt-nonkey-disk01.img\n"
				  "\t\tsize 1048576\n"
				  "\n"
				  "\t\t# Non-key attributes\n"
				  "\t\tblocksize 512\n"
				  "\t\tcluster_mode 0\n"
				  "\t\texpl_alua 0\n"
				  "\t\tnv_cache 0\n"
				  "\t\to_direct 0\n"
				  "\t\tprod_id disk01\n"
				  "\t\tprod_rev_lvl \" 370\"\n"
				  "\t\tread_only 0\n"
				  "\t\tremovable 0\n"
				  "\t\trotational 1\n"
				  "\t\tt10_dev_id 8e1e1b9f-disk01\n"
				  "\t\tt10_vend_id SCST_FIO\n"
				  "\t\tthin_provisioned 0\n"
				  "\t\tthreads_num 1\n"
				  "\t\tthreads_pool_type per_initiator\n"
				  "\t\tusn 8e1e1b9f\n"
				  "\t\twrite_through 0\n"
				  "\t}\n"
				  "\n"
				  "\t# Non-key attributes\n"
				  "\ttrace_level \"out_of_mem | minor | pid | line | function | "
				  "special | mgmt | mgmt_dbg | flow_control | conn\"\n"
				  "}\n"
				  "\n"
				  "TARGET_DRIVER copy_manager {\n"
				  "\t# Non-key attributes\n"
				  "\tallow_not_connected_copy 0\n"
				  "\n"
				  "\tTARGET copy_manager_tgt {\n"
				  "\t\t# Non-key attributes\n"
				  "\t\taddr_method PERIPHERAL\n"
				  "\t\tblack_hole 0\n"
				  "\t\tcpu_mask ffffffff\n"
				  "\t\tforwarding 0\n"
				  "\t\tio_grouping_type auto\n"
				  "\t\trel_tgt_id 0\n"
				  "\n"
				  "\t\tLUN 0 disk01\n"
				  "\t}\n"
				  "}\n"
				  "\n"
				  "TARGET_DRIVER iscsi {\n"
				  "\tenabled 1\n"
				  "\n"
				  "\t# Non-key attributes\n"
				  "\tlink_local 1\n"
				  "\topen_state open\n"
				  "\ttrace_level \"out_of_mem | minor | pid | line | function | "
				  "special | mgmt | mgmt_dbg | flow_control | conn\"\n"
				  "\n"
				  "\tTARGET iqn.2006-10.net.vlnb:tgt {\n"
				  "\t\tenabled 1\n"
				  "\t\trel_tgt_id 1\n"
				  "\n"
				  "\t\t# Non-key attributes\n"
				  "\t\tDataDigest None\n"
				  "\t\tFirstBurstLength 65536\n"
				  "\t\tHeaderDigest None\n"
				  "\t\tImmediateData Yes\n"
				  "\t\tInitialR2T No\n"
				  "\t\tMaxBurstLength 1048576\n"
				  "\t\tMaxOutstandingR2T 32\n"
				  "\t\tMaxRecvDataSegmentLength 1048576\n"
				  "\t\tMaxSessions 0\n"
				  "\t\tMaxXmitDataSegmentLength 1048576\n"
				  "\t\tNopInInterval 30\n"
				  "\t\tNopInTimeout 30\n"
				  "\t\tQueuedCommands 32\n"
				  "\t\tRspTimeout 90\n"
				  "\t\taddr_method PERIPHERAL\n"
				  "\t\tblack_hole 0\n"
				  "\t\tcpu_mask ffffffff\n"
				  "\t\tforwarding 0\n"
				  "\t\tio_grouping_type auto\n"
				  "\t\tper_portal_acl 0\n"
				  "\t\ttid 1\n"
				  "\n"
				  "\t\tLUN 0 disk01 {\n"
				  "\t\t\t# Non-key attributes\n"
				  "\t\t\tread_only 0\n"
				  "\t\t}\n"
				  "\n"
				  "\t\tGROUP ini {\n"
				  "\t\t\tLUN 0 disk01\n"
				  "\n"
				  "\t\t\tINITIATOR iqn.1993-08.org.debian:01:abcdef\n"
				  "\n"
				  "\t\t\t# Non-key attributes\n"
				  "\t\t\taddr_method PERIPHERAL\n"
				  "\t\t\tblack_hole 0\n"
				  "\t\t\tcpu_mask ffffffff\n"
				  "\t\t\tio_grouping_type auto\n"
				  "\t\t}\n"
				  "\t}\n"
				  "}\n";

Test(conf_model, scstadmin_nonkey_output_loads)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str(nonkey_conf, &c, &d);

	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert_eq(cap_count(&c, true), 0, "%s", cap_dump(&c));
	cr_assert(cap_has(&c, false, 50,
			  "rel_tgt_id 0 means 'not set' in SCST; TARGET "
			  "copy_manager_tgt gets one assigned"),
		  "%s", cap_dump(&c));
	cr_assert(cap_has(&c, false, 89,
			  "attribute 'tid' is read-only in SCST ('scstadmin "
			  "-write_config -nonkey' writes it); kept, not used"),
		  "%s", cap_dump(&c));
	const struct tgt_target *t =
	    tgt_driver_target(tgt_config_driver(cfg, "iscsi"), "iqn.2006-10.net.vlnb:tgt");
	cr_assert_not_null(t);
	cr_assert_eq(t->rel_tgt_id, 1);
	cr_assert_eq(tgt_config_driver(cfg, "copy_manager")->targets[0].rel_tgt_id, 2);
	cr_assert_eq(t->ngroups, 1);
	cr_assert_eq(t->table.n, 1);
	cr_assert_not(t->table.e[0].read_only);
	tgt_config_free(cfg);
}

/* ---- malformed configurations: exact message and line ---- */

Test(conf_errors, unknown_handler)
{
	assert_fails_with("HANDLER vdisk_foo {\n}\n", 1,
			  "unknown handler 'vdisk_foo' (supported: vdisk_fileio, vdisk_blockio, "
			  "vdisk_nullio, vcdrom, ramdisk, vdisk_rbd)");
}

Test(conf_errors, scst_handler_utgt_does_not_have)
{
	assert_fails_with(
	    "\nHANDLER scst_user {\n DEVICE u\n}\n", 2,
	    "handler 'scst_user' exists in SCST but is not supported by utgt (supported: "
	    "vdisk_fileio, vdisk_blockio, vdisk_nullio, vcdrom, ramdisk, vdisk_rbd)");
}

/* Pass-through handlers need a kernel SCSI host: the error says so and what to use instead. */
Test(conf_errors, passthrough_handler_needs_a_scsi_host)
{
	assert_fails_with("HANDLER dev_disk {\n DEVICE 2:0:0:0\n}\n", 1,
			  "handler 'dev_disk' passes commands through to a SCSI device of the host "
			  "(/dev/sg*), which needs a SCSI host in the kernel and utgt runs in user "
			  "space without one; export the device's block node with vdisk_blockio "
			  "instead");
}

/* `hw_target 1` and ib_srpt's `device mlx4_0` are read-only attributes -write_config writes
 * inside TARGET, not the HW_TARGET / DEVICE keywords. */
Test(conf_errors, lower_case_hw_target_and_device_are_attributes)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("TARGET_DRIVER ib_srpt {\n TARGET fe80::1 {\n"
					  "  enabled 1\n  hw_target 1\n  device mlx4_0\n }\n}\n",
					  &c, &d);

	cr_assert_not_null(cfg, "%s", cap_dump(&c));
	cr_assert_eq(d.errors, 0);
	tgt_config_free(cfg);
}

Test(conf_errors, duplicate_device)
{
	assert_fails_with(RAM_D0 "HANDLER vdisk_nullio {\n\tDEVICE d0\n}\n", 7,
			  "duplicate DEVICE 'd0' (first defined at line 2)");
}

Test(conf_errors, device_without_name)
{
	assert_fails_with("HANDLER ramdisk {\n DEVICE\n}\n", 2,
			  "expected 'DEVICE <name> [{ attributes }]'");
}

Test(conf_errors, device_with_two_names)
{
	assert_fails_with("HANDLER ramdisk {\n DEVICE a b\n}\n", 2,
			  "expected 'DEVICE <name> [{ attributes }]'");
}

Test(conf_errors, device_name_too_long)
{
	char text[256];
	snprintf(text, sizeof(text), "HANDLER vdisk_nullio {\n DEVICE %070d\n}\n", 7);
	assert_fails_with(text, 2,
			  "device name '00000000000000000000000000000000...' is longer "
			  "than 63 characters");
}

Test(conf_errors, keyword_inside_device)
{
	assert_fails_with("HANDLER ramdisk {\n DEVICE d { size_mb 1\n LUN 0 d\n }\n}\n", 3,
			  "'LUN' is not allowed inside DEVICE (it takes attributes only)");
}

Test(conf_errors, attribute_without_value)
{
	assert_fails_with("HANDLER ramdisk {\n DEVICE d {\n  size_mb\n }\n}\n", 3,
			  "attribute 'size_mb' has no value");
}

Test(conf_errors, attribute_with_a_block)
{
	assert_fails_with("HANDLER ramdisk {\n DEVICE d {\n  size_mb 1 {\n  }\n }\n}\n", 3,
			  "attribute 'size_mb' cannot have a { block }");
}

Test(conf_errors, empty_attribute_name)
{
	assert_fails_with("\"\" 1\n", 1, "empty attribute name");
}

Test(conf_errors, unknown_top_level_attribute)
{
	assert_fails_with("setupid 1\n", 1, "unknown attribute 'setupid' in the top level");
}

Test(conf_errors, keyword_in_wrong_case)
{
	assert_fails_with("Handler ramdisk {\n}\n", 1,
			  "keyword 'Handler' must be written 'HANDLER'");
}

Test(conf_errors, keyword_at_the_wrong_level)
{
	assert_fails_with("LUN 0 d0\n", 1, "'LUN' is not allowed at the top level");
}

Test(conf_errors, handler_attribute_unknown)
{
	assert_fails_with("HANDLER ramdisk {\n foo 1\n}\n", 2,
			  "unknown attribute 'foo' in HANDLER ramdisk");
}

Test(conf_errors, legacy_format_through_the_loader)
{
	assert_fails_with("[HANDLER vdisk]\nDEVICE disk01,/vdisks/disk01.dsk\n", 1,
			  "this is the old SCST 1.x configuration format ('[HANDLER' sections); "
			  "convert it to the SCST 2.x+ format, e.g. with 'scstadmin -config' then "
			  "'scstadmin -write_config'");
}

Test(conf_errors, unterminated_quote_through_the_loader)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n IncomingUser \"joe secret\n}\n", 7,
			  "unterminated quoted string");
}

Test(conf_errors, unexpected_brace_through_the_loader)
{
	assert_fails_with(RAM_D0 "}\n", 6, "unexpected '}' (no block is open)");
}

Test(conf_errors, unterminated_block_through_the_loader)
{
	assert_fails_with(RAM_D0 "TARGET_DRIVER iscsi {\n TARGET t {\n  LUN 0 d0\n }\n", 6,
			  "unterminated block: 'TARGET_DRIVER iscsi {' is never closed");
}

Test(conf_errors, ramdisk_without_size_from_device_layer)
{
	struct captured c;
	struct diag d;
	struct tgt_config *cfg = load_str("HANDLER ramdisk {\n\tDEVICE r\n}\n", &c, &d);
	int line;
	cr_assert_null(cfg);
	cr_assert_not_null(cap_first_error(&c, &line));
	cr_assert_eq(line, 2, "reported at the DEVICE line: %s", cap_dump(&c));
}

/* ---- robustness: truncations and mutations never crash, leak or loop ---- */

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

static void try_load(const char *text, size_t len)
{
	struct captured c;
	struct diag d = cap_diag(&c);
	struct tgt_config *cfg = tgt_config_parse(text, len, "fuzz.conf", &d);
	/* loaded <=> no error reported */
	cr_assert_eq(cfg != NULL, d.errors == 0, "errors %d but cfg %p", d.errors, (void *)cfg);
	if (cfg) {
		FILE *null = fopen("/dev/null", "w");
		tgt_config_print(cfg, null); /* printing any loaded model is safe */
		fclose(null);
	}
	tgt_config_free(cfg);
}

static const char *const specials[] = {"{",
				       "}",
				       "\"",
				       "\\",
				       "#",
				       "\n",
				       "\r\n",
				       " ",
				       "LUN",
				       "GROUP",
				       "TARGET",
				       "HANDLER",
				       "DEVICE",
				       "INITIATOR",
				       "16384",
				       "-1",
				       "!*",
				       "\0",
				       "[HANDLER x]\n",
				       "99999999999999999999"};

static void mutate_and_load(const char *orig, size_t len, unsigned seed, unsigned rounds)
{
	char *buf = malloc(len + 64);
	for (unsigned r = 0; r < rounds; r++) {
		seed = seed * 1103515245u + 12345u;
		size_t n = len;
		memcpy(buf, orig, len);
		switch (seed >> 28 & 3) {
		case 0: /* truncate */
			n = (seed >> 4) % (len + 1);
			break;
		case 1: /* flip a byte */
			if (len)
				buf[(seed >> 4) % len] ^= (char)(1u << (seed & 7));
			break;
		case 2: { /* delete a run */
			size_t at = len ? (seed >> 4) % len : 0, k = (seed & 15) + 1;
			if (at + k > len)
				k = len - at;
			memmove(buf + at, buf + at + k, len - at - k);
			n = len - k;
			break;
		}
		case 3: { /* insert something that matters to the grammar */
			const char *s =
			    specials[(seed >> 8) % (sizeof(specials) / sizeof(specials[0]))];
			size_t sl = strlen(s) ? strlen(s) : 1, at = len ? (seed >> 4) % len : 0;
			if (sl > 60)
				sl = 60;
			memmove(buf + at + sl, buf + at, len - at);
			memcpy(buf + at, s, sl);
			n = len + sl;
			break;
		}
		}
		try_load(buf, n);
	}
	free(buf);
}

Test(conf_robustness, mutations_of_every_example_config, .timeout = 120)
{
	DIR *dir = opendir("conf");
	struct dirent *e;
	unsigned files = 0;

	cr_assert_not_null(dir, "run from the repository root (conf/ not found)");
	while ((e = readdir(dir))) {
		size_t nl = strlen(e->d_name), len;
		char path[512];
		if (nl < 6 || strcmp(e->d_name + nl - 5, ".conf"))
			continue;
		snprintf(path, sizeof(path), "conf/%s", e->d_name);
		char *text = read_file(path, &len);
		cr_assert_not_null(text, "%s", path);
		try_load(text, len);
		mutate_and_load(text, len, (unsigned)nl * 7919u, 400);
		free(text);
		files++;
	}
	closedir(dir);
	cr_assert_geq(files, 7, "expected the documented examples in conf/");
	mutate_and_load(seed001, sizeof(seed001) - 1, 1, 400);
}

Test(conf_robustness, every_prefix_of_the_seed)
{
	for (size_t n = 0; n <= sizeof(seed001) - 1; n++)
		try_load(seed001, n);
}
