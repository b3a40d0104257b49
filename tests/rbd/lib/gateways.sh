# Two utgtd gateways serving one RBD image, ALUA following its exclusive lock (docs/rbd.md,
# "Several gateways"): the configuration and the state query shared by the tests that run them,
# tests/rbd/suite_gateways.sh (utgt-bench on the host) and tests/vm/rbd_multipath.sh (open-iscsi
# and dm-multipath in the qemu guest).  Sourced, not run.
#
# Set before calling: GW_IQN (gateway NAME's target is GW_IQN-NAME), GW_IMAGE (pool/image),
# GW_GRACE (alua_lock_grace, s) and CEPH_CONF; optional: GW_DEVICE_EXTRA (more lines for the
# DEVICE, e.g. "alua_explicit 1"), UTGTADM (default build/utgtadm).

# gw_conf NAME PORT RTID GROUP PEER PEER_RTID PEER_GROUP: gateway NAME's scst.conf, listening
# on 127.0.0.1:PORT: its own target and group, and its peer's group, known by the peer's
# rel_tgt_id (SCST's TARGET_GROUP of another node).  The device is called "shared" on every
# gateway, so the LU has one identity (VPD 83) whichever gateway answers.
gw_conf() {
	cat <<EOF
HANDLER vdisk_rbd {
	DEVICE shared {
		pool ${GW_IMAGE%/*}
		image ${GW_IMAGE#*/}
		ceph_conf $CEPH_CONF
		alua_follow_lock 1
		alua_lock_grace $GW_GRACE
		${GW_DEVICE_EXTRA:-}
	}
}
TARGET_DRIVER iscsi {
	listen 127.0.0.1:$2
	TARGET $GW_IQN-$1 {
		enabled 1
		rel_tgt_id $3
		NopInInterval 0
		LUN 0 shared
	}
}
DEVICE_GROUP shared {
	DEVICE shared
	TARGET_GROUP gw-$1 {
		group_id $4
		TARGET $GW_IQN-$1
	}
	TARGET_GROUP gw-$5 {
		group_id $7
		TARGET $GW_IQN-$5 {
			rel_tgt_id $6
		}
	}
}
EOF
}

# gw_show SOCKET JQ: a field of the device "shared" in `utgtadm show devices` of the gateway
# whose admin socket is SOCKET (empty when the gateway does not answer)
gw_show() {
	"${UTGTADM:-build/utgtadm}" -s "$1" show devices --json 2>/dev/null |
		jq -r ".devices[] | select(.name == \"shared\") | $2"
}
