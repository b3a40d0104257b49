/* backstore_find: SCST handler names to ops tables. */
#include <criterion/criterion.h>

#include "scsi/backstore/backstore.h"

Test(bs_registry, finds_the_four_handlers)
{
	const char *names[] = {"vdisk_fileio", "vdisk_blockio", "vdisk_nullio", "ramdisk"};
	const struct backstore_ops *ops[] = {&bs_fileio_ops, &bs_blockio_ops, &bs_nullio_ops,
					     &bs_ramdisk_ops};

	for (int i = 0; i < 4; i++) {
		cr_assert_eq(backstore_find(names[i]), ops[i], "%s", names[i]);
		cr_assert_str_eq(ops[i]->name, names[i]);
		cr_assert_not_null(ops[i]->open);
		cr_assert_not_null(ops[i]->close);
		cr_assert_not_null(ops[i]->submit);
		cr_assert_not_null(ops[i]->attrs);
	}
}

Test(bs_registry, unknown_names)
{
	cr_assert_null(backstore_find("vdisk"));
	cr_assert_null(backstore_find("VDISK_FILEIO"));
	cr_assert_null(backstore_find("dev_disk"));
	cr_assert_null(backstore_find(""));
	cr_assert_null(backstore_find(NULL));
}
