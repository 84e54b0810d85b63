#!/bin/sh
# sysprof-record.sh OUT COMMAND [ARG...] - runs COMMAND under sysprof-cli (Debian's sysprof
# 3.46), its capture into OUT; the `sysprof` tool recipe's command (docs/tools.md).
# sysprof-cli asks sysprofd, on the D-Bus system bus, to open the perf events, and sysprofd
# asks polkitd whether the caller may. Where the system bus has a sysprofd, or can start one,
# the script uses it as it is. Where there is no system bus (a container), it starts a
# private one in a temporary directory, with sysprofd and polkitd on it, for this recording
# only, and always stops them and removes the directory after it; nothing of the machine's
# own bus is touched. Exits with sysprof-cli's status, or 1 with one line why it could not
# record, 2 on a usage mistake.
# sysprof samples every CPU (the whole system, the idle task left out) every 1.2 M cycles
# where the CPU's cycle counter opens, else every 1 ms of its cpu-clock
# (src/libsysprof/sysprof-perf-source.c): the recipe declares the second (rate 1000), so
# this script refuses to record where a hardware cycle counter would be used instead.
set -u
me=sysprof-record
die() {
	echo "$me: $*" >&2
	exit 1
}
if [ $# -lt 2 ]; then
	echo "usage: $me OUT COMMAND [ARG...]" >&2
	exit 2
fi
out=$1
shift
command -v sysprof-cli >/dev/null 2>&1 || die "sysprof-cli not found on PATH"
[ "$(id -u)" = 0 ] || die "needs root (sysprofd opens system-wide perf events)"

# 0 when the CPU's hardware cycle counter opens here (perf stat counts it)
hw_cycles() {
	if command -v perf >/dev/null 2>&1; then
		perf stat -x, -e cycles true 2>&1 >/dev/null | grep -q '^[0-9]'
	else
		ls -d /sys/bus/event_source/devices/cpu /sys/bus/event_source/devices/cpu_core \
			/sys/bus/event_source/devices/armv* >/dev/null 2>&1
	fi
}
hw_cycles && die "a hardware cycle counter is here: sysprof would sample every 1.2 M cycles, not the recipe's 1000 Hz of cpu-clock"

# 0 when the system bus at $DBUS_SYSTEM_BUS_ADDRESS (or the default) has NAME or can start it
on_bus() {
	r=$(dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.ListActivatableNames 2>/dev/null) || return 1
	case $r in *"\"$1\""*) return 0 ;; esac
	r=$(dbus-send --system --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
		org.freedesktop.DBus.NameHasOwner "string:$1" 2>/dev/null) || return 1
	case $r in *"boolean true"*) return 0 ;; esac
	return 1
}

dir=$(mktemp -d "${TMPDIR:-/tmp}/sysprof-record.XXXXXX") || die "cannot make a temporary directory"
pids=
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# sysprof-cli exits 0 even when sysprofd refused it ("Failure: ..."): its log says
record() {
	sysprof-cli -f --no-battery --no-cpu --no-disk --no-memory --no-network "$out" -- "$@" \
		2>"$dir/cli.log"
	rc=$?
	cat "$dir/cli.log" >&2
	failure=$(grep -m 1 '^Failure: ' "$dir/cli.log")
	[ -z "$failure" ] || die "sysprof-cli could not record: ${failure#Failure: }"
	return $rc
}

if command -v dbus-send >/dev/null 2>&1 && on_bus org.gnome.Sysprof3; then
	record "$@"
	exit $?
fi

for b in dbus-daemon dbus-send /usr/libexec/sysprofd /usr/lib/polkit-1/polkitd; do
	command -v "$b" >/dev/null 2>&1 || die "no system bus with sysprofd here, and $b to start one is missing"
done
# polkitd runs as its own user, which must reach the bus's socket in the directory
if chgrp polkitd "$dir" 2>/dev/null; then
	chmod 710 "$dir"
else
	chmod 711 "$dir"
fi
cat >"$dir/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$dir/socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_destination="*"/>
    <allow receive_type="*"/>
  </policy>
</busconfig>
EOF
bus=$(dbus-daemon --config-file="$dir/bus.conf" --fork --print-pid 2>"$dir/bus.log") ||
	die "dbus-daemon cannot start: $(tail -1 "$dir/bus.log")"
pids=$bus
DBUS_SYSTEM_BUS_ADDRESS=unix:path=$dir/socket
export DBUS_SYSTEM_BUS_ADDRESS
/usr/lib/polkit-1/polkitd --no-debug >"$dir/polkitd.log" 2>&1 &
pids="$pids $!"
/usr/libexec/sysprofd >"$dir/sysprofd.log" 2>&1 &
pids="$pids $!"
i=0
until on_bus org.gnome.Sysprof3 && on_bus org.freedesktop.PolicyKit1; do
	i=$((i + 1))
	if [ $i -gt 50 ]; then
		on_bus org.gnome.Sysprof3 || die "sysprofd cannot start: $(tail -1 "$dir/sysprofd.log")"
		die "polkitd cannot start: $(tail -1 "$dir/polkitd.log")"
	fi
	sleep 0.1
done
record "$@"
