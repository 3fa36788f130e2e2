# shellcheck shell=bash
# Checks on pcapng files written by ferryd's capture (t_capture*.sh);
# sourced after testbed.sh (uses PYTHON and TB_LIB_DIR).

# cap_check_frames FILE SPORT SIZE: every frame of FILE equal to the
# generator's frame from SPORT of SIZE bytes, timestamps in order; prints
# how many frames.
cap_check_frames() {
	local file=$1 sport=$2 size=$3
	tcpdump -nn -tt -r "$file" -xx 2>/dev/null | "$PYTHON" -c '
import re, struct, sys
sys.path.insert(0, sys.argv[1])
import pkt
sport, size = int(sys.argv[2]), int(sys.argv[3])
frames, ts, cur = [], [], None
for line in sys.stdin:
    m = re.match(r"^(\d+\.\d+) ", line)
    if m:
        cur = bytearray()
        frames.append(cur)
        ts.append(float(m.group(1)))
        continue
    m = re.match(r"^\s+0x[0-9a-f]+:\s+(.*)$", line)
    if m and cur is not None:
        cur += bytes.fromhex(m.group(1).split("  ")[0].replace(" ", ""))
for i, f in enumerate(frames):
    want = pkt.gen_frame(size, sport, bytes(f[6:12]), bytes(f[0:6]))
    if bytes(f) != want:
        sys.exit("frame %d differs from the generator frame" % i)
if ts != sorted(ts):
    sys.exit("timestamps out of order")
print(len(frames))
' "$TB_LIB_DIR" "$sport" "$size"
}

# cap_count FILE TEXT: occurrences of TEXT in FILE (a packet comment such
# as xdp=dev_redirect; tcpdump does not print comments).
cap_count() {
	grep -ao -- "$2" "$1" | wc -l
}

# cap_devmap_progs FERRYD PORT MAP [IFINDEX]: the program ids held by the
# entries of DEVMAP MAP (ferry_tx_dev, ferry_fib_dev) in the classifier of
# PORT (ferryd FERRYD, in the netns of that name), one per line, 0 for an
# entry with none; with IFINDEX, only the entries towards that egress.
# Found by the program attached to the port's interface: map names repeat
# across ferryds.
cap_devmap_progs() {
	local fd=$1 port=$2 name=$3 want=${4:-} ifn pid mid
	ifn=$(tb_ctlj "$fd" port show "$port" | jq -r '.data[0].ifname')
	pid=$(ip -n "$(tb_nsname "$fd")" -j -d link show dev "$ifn" |
		jq -r '.[0].xdp.prog.id // (.[0].xdp.attached[0].prog.id)')
	for mid in $(bpftool -j prog show id "$pid" | jq -r '.map_ids[]'); do
		[[ $(bpftool -j map show id "$mid" | jq -r .name) == "$name" ]] || continue
		# struct bpf_devmap_val: {ifindex, program id}, as BTF shows
		# it or as raw little-endian bytes.
		bpftool -j map dump id "$mid" | jq -r --arg want "$want" '
			def word(b): [b[] | ltrimstr("0x")] | reverse | join("")
				| explode | map(if . >= 97 then . - 87 else . - 48 end)
				| reduce .[] as $d (0; . * 16 + $d);
			.[] | (.formatted.value // .value) as $v
			| if ($v | type) == "object" then [$v.ifindex, $v.bpf_prog.id]
			  else [word($v[0:4]), word($v[4:8])] end
			| select($want == "" or (.[0] | tostring) == $want) | .[1]'
	done
}

# cap_show_until JQ [NAME]: polls NAME's (default dut) `capture show` until
# the jq condition JQ holds of it (5 s at most: the XDP records come through
# a perf buffer its reader polls, captures end on the daemon's 1 s tick);
# prints the last reply either way, for the asserts that follow.
cap_show_until() {
	local cond=$1 name=${2:-dut} show i
	for ((i = 0; i < 50; i++)); do
		show=$(tb_do "$name" capture show)
		jq -e "$cond" <<<"$show" >/dev/null && break
		sleep 0.1
	done
	printf '%s\n' "$show"
}
