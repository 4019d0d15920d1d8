#!/bin/sh
# simgrid_compare.sh - topocc's flow evaluator against SimGrid's SMPI on the
# same networks and the same MPI algorithms (docs/VALIDATION.md, "Against
# another simulator: SimGrid"). SMPI runs bench/simgrid_coll.c (one
# collective, timed in simulated time) on a SimGrid platform written here;
# topocc runs `collective --mode flow` on the same graph with the matching
# algorithm. Prints one Markdown row per (case, size): network, operation,
# size, SMPI's algorithm, topocc's, the two times and topocc / SimGrid.
# libsimgrid-dev (smpicc, smpirun) is installed with apt-get when missing.
# Not part of the test suite: it takes a few minutes on two cores.
# Usage: bench/simgrid_compare.sh [BUILD_DIR]   (SIZES="1024 65536" to override)
set -u
B=${1:-build}
T="$B/topocc"
here=$(dirname "$0")
[ -x "$T" ] || { echo "simgrid_compare.sh: build first (make build)" >&2; exit 2; }

if ! dpkg-query -W -f='${Status}' libsimgrid-dev 2>/dev/null | grep -q 'install ok installed'; then
    echo "installing: libsimgrid-dev" >&2
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libsimgrid-dev; } >&2 ||
        { echo "simgrid_compare.sh: could not install libsimgrid-dev" >&2; exit 2; }
fi
if ! command -v smpicc >/dev/null || ! command -v smpirun >/dev/null; then
    echo "simgrid_compare.sh: smpicc or smpirun not found" >&2; exit 2
fi

work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
smpicc -O2 -o "$work/coll" "$here/simgrid_coll.c" >"$work/cc.log" 2>&1 ||
    { cat "$work/cc.log" >&2; echo "simgrid_compare.sh: smpicc failed" >&2; exit 1; }

# Links: 100 Gb/s per direction (SPLITDUPLEX: one link each way, as topocc's),
# 500 ns per cable, no switch or router latency on either side (SimGrid has
# none; topocc's hop_lat=0), no per-message overhead but on ft1a (SMPI's
# smpi/os, or, ois default to 0; topocc's alpha=0).
BW=100Gbps LAT=500ns
cluster() { # ID TOPOLOGY PARAMETERS HOSTS
    cat >"$work/$1.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="$1" prefix="node-" suffix="" radical="0-$(($4 - 1))" speed="1Gf" bw="$BW" lat="$LAT"
           topology="$2" topo_parameters="$3" sharing_policy="SPLITDUPLEX"/>
</platform>
EOF
    i=0; : >"$work/$1.hosts"
    while [ $i -lt "$4" ]; do echo "node-$i" >>"$work/$1.hosts"; i=$((i + 1)); done
}
# network id | SimGrid topology | its parameters | ranks | topocc spec and routing [| more
# SMPI settings]. ft1a: ft1 with a per-message overhead of 1 us on both sides
# (SMPI's smpi/os and smpi/ois, "from 0 bytes: 1e-6 + 0 x size"; topocc's alpha).
networks() {
cat <<EOF
ft|FAT_TREE|2;8,8;1,8;1,1|64|--topo clos:down=8x8,up=1x8,bw=$BW,lat=$LAT,hop_lat=0,alpha=0 --routing dmodk
ft1|FAT_TREE|1;64;1;1|64|--topo clos:down=64,up=1,bw=$BW,lat=$LAT,hop_lat=0,alpha=0 --routing dmodk
ft1a|FAT_TREE|1;64;1;1|64|--topo clos:down=64,up=1,bw=$BW,lat=$LAT,hop_lat=0,alpha=1us --routing dmodk|--cfg=smpi/os:0:1e-6:0 --cfg=smpi/ois:0:1e-6:0
ft4|FAT_TREE|2;8,8;1,2;1,1|64|--topo clos:down=8x8,up=1x2,bw=$BW,lat=$LAT,hop_lat=0,alpha=0 --routing dmodk
torus|TORUS|4,4,4|64|--topo torus:dims=4x4x4,bw=$BW,lat=$LAT,hop_lat=0,alpha=0 --routing dor-positive
EOF
}
networks | while IFS='|' read -r id topo par n spec; do cluster "$id" "$topo" "$par" "$n"; done

# SimGrid's settings (docs/VALIDATION.md gives the source of each): CM02
# without its corrections (latency and bandwidth factors 1, weight-S 0 are
# CM02's defaults), no cross-traffic, a TCP window too large to bind, no
# benchmarked computation; messages below 64 KiB are eager (detached and sent
# at once through the receiver's permanent mailbox), from 64 KiB rendezvous.
CFG="--cfg=network/model:CM02 --cfg=network/crosstraffic:0 --cfg=network/TCP-gamma:1e30
 --cfg=smpi/simulate-computation:no --cfg=smpi/send-is-detached-thresh:65536
 --cfg=smpi/async-small-thresh:65536"
# topocc: a message of up to 65535 bytes waits for no receiver (SMPI's test
# is size < 65536); a row that gives --deps has no eager limit.
TCFG="--mode flow --dtype fp64 --format csv --quiet"

# network | MPI operation | SMPI's algorithm | topocc's operation | topocc's algorithm
# [| more topocc options | sizes, if not $SIZES]. ft1 (one switch: every route
# is 2 cables, so every flow has the same latency) and the --deps recv rows
# (a rank's eager sends may overlap, as SMPI's detached sends do; at sizes
# whose messages are all below SMPI's 64 KiB) are controls for the
# differences that docs/VALIDATION.md explains.
cases() {
cat <<'EOF'
ft|allreduce|rdb|allreduce|rd
ft|allreduce|rab_rdb|allreduce|rhd
ft|allreduce|lr|allreduce|ring
ft|allgather|NTSLR|allgather|ring
ft|allgather|rdb|allgather|rd
ft|allgather|bruck|allgather|bruck
ft|allgather|ring|allgather|shift
ft|alltoall|pair|alltoall|pairwise
ft|alltoall|bruck|alltoall|bruck
ft|alltoall|basic_linear|alltoall|direct
ft|bcast|binomial_tree|broadcast|binomial
ft|bcast|binomial_tree|broadcast|binomial|--deps recv|1024 16384
ft|bcast|scatter_rdb_allgather|broadcast|scatter-rd
ft|bcast|scatter_rdb_allgather|broadcast|scatter-rd|--deps recv|1024 65536
ft|reduce_scatter|mpich_pair|reducescatter|pairwise
ft1|allgather|ring|allgather|shift
ft1|alltoall|basic_linear|alltoall|direct
ft1|bcast|binomial_tree|broadcast|binomial
ft1|bcast|binomial_tree|broadcast|binomial|--deps recv|1024 16384
ft1|bcast|scatter_rdb_allgather|broadcast|scatter-rd
ft1|bcast|scatter_rdb_allgather|broadcast|scatter-rd|--deps recv|1024 65536
ft1a|allreduce|rdb|allreduce|rd||1024 1048576
ft1a|allreduce|lr|allreduce|ring||1024 1048576
ft1a|alltoall|basic_linear|alltoall|direct||1024 1048576
ft1a|bcast|binomial_tree|broadcast|binomial||1024 1048576
ft4|allreduce|lr|allreduce|ring
ft4|allreduce|rab_rdb|allreduce|rhd
ft4|alltoall|basic_linear|alltoall|direct
torus|allreduce|lr|allreduce|ring
torus|allreduce|rdb|allreduce|rd
torus|allgather|NTSLR|allgather|ring
torus|bcast|binomial_tree|broadcast|binomial
EOF
}
SIZES=${SIZES:-1024 65536 1048576 4194304}
human() {
    awk -v b="$1" 'BEGIN { if (b >= 1048576 && b % 1048576 == 0) printf "%d MiB", b / 1048576;
        else if (b >= 1024 && b % 1024 == 0) printf "%d KiB", b / 1024; else printf "%d B", b }'
}

echo "| network | operation | size | SMPI algorithm | topocc algorithm | SimGrid (us) | topocc (us) | topocc / SimGrid |"
echo "|---|---|---:|---|---|---:|---:|---:|"
fail=0
cases >"$work/cases"
while IFS='|' read -r net op salgo top talgo more sizes; do
    line=$(networks | grep "^$net|")
    n=$(echo "$line" | cut -d'|' -f4)
    spec=$(echo "$line" | cut -d'|' -f5)
    scfg=$(echo "$line" | cut -d'|' -f6)
    prog=$op
    [ "$op" = reduce_scatter ] && prog=reducescatter
    for s in ${sizes:-$SIZES}; do
        # shellcheck disable=SC2086
        sg=$(smpirun -np "$n" -platform "$work/$net.xml" -hostfile "$work/$net.hosts" $CFG $scfg \
            "--cfg=smpi/$op:$salgo" "$work/coll" "$prog" "$s" 2>"$work/smpi.log" </dev/null | tail -n 1)
        # shellcheck disable=SC2086
        targs="$TCFG --eager-limit 65535"
        [ -n "$more" ] && targs="$TCFG $more"
        # shellcheck disable=SC2086
        tc=$("$T" collective $spec --op "$top" --algo "$talgo" --size "$s" $targs 2>"$work/topocc.log" |
            awk -F, 'NR == 2 { print $5 }')
        case "$sg" in *e[-+]*) ;; *) echo "simgrid_compare.sh: smpirun failed ($net $op $salgo $s):" >&2
            tail -n 5 "$work/smpi.log" >&2; fail=1; continue ;; esac
        [ -n "$tc" ] || { echo "simgrid_compare.sh: topocc failed ($net $top $talgo $s):" >&2
            cat "$work/topocc.log" >&2; fail=1; continue; }
        shown=$talgo
        [ -n "$more" ] && shown="$talgo ($more)"
        awk -v net="$net" -v op="$op" -v sz="$(human "$s")" -v sa="$salgo" -v ta="$shown" -v sg="$sg" -v tc="$tc" \
            'BEGIN { printf "| %s | %s | %s | %s | %s | %.3f | %.3f | %.4f |\n", net, op, sz, sa, ta,
                     sg * 1e6, tc * 1e6, tc / sg }'
    done
done <"$work/cases"
exit $fail
