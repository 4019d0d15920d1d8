#!/bin/sh
# nccl_validate.sh - topocc nccl-tests --compare on the published nccl-tests
# results in tests/data/nccl-tests/ (docs/VALIDATION.md, "nccl-tests"): one
# line per case with the median |busbw error| per size band, as a Markdown
# table. Cases whose measured run used what topocc does not model
# (another transport's costs, a NIC count the source does not state) are
# listed with the reason and compared all the same, so the gap shows. No constant is fitted: every
# case is held out. Usage: bench/nccl_validate.sh [BUILD_DIR]
set -u
B=${1:-build}
T="$B/topocc"
D="$(dirname "$0")/../tests/data/nccl-tests"
[ -x "$T" ] || { echo "nccl_validate.sh: build first (make build)" >&2; exit 2; }

# file | modelled? | topocc arguments
cases() {
cat <<'EOF'
nccltests309_gjaion_h100_2node_ib400_allreduce_ring_minctas24_qps2.txt|yes: Ring forced, 24 channels|--preset dgx-h100:nodes=2 --algo nccl-ring:channels=24
meta_gcm_a100_1node_8gpu_allreduce_fixture.txt|yes: one A100 node (no NVLS on A100)|--preset dgx-a100 --algo nccl
oci_bm_gpu4_8_a100_1node_8gpu_allreduce_10GiB_ubuntu.txt|yes: one A100 node|--preset dgx-a100 --algo nccl
gcp_a3ultra_2node_1gpu_H200_roce_allreduce.txt|yes: 2 GPUs, one 400G NIC each|--topo clos:down=2,up=1,bw=400Gbps,arch=hopper --algo nccl
gcp_a3ultra_2node_1gpu_H200_roce_allgather.txt|yes: 2 GPUs, one 400G NIC each|--topo clos:down=2,up=1,bw=400Gbps,arch=hopper --algo nccl --op allgather
gcp_a4_2node_16xB200_roce_allgather.txt|yes: all-gather between nodes runs Ring|--preset dgx-b200:nodes=2 --algo nccl --op allgather
meta_gcm_a100_2node_16gpu_allreduce_fixture.txt|partly: fabric not stated (DGX A100 assumed); NCCL may pick Tree|--preset dgx-a100:nodes=2 --algo nccl
oci_bm_gpu4_8_a100_2node_roce_allreduce_10GiB.txt|partly: 16 x 100G RoCE as 8 x 200G; NCCL may pick Tree|--preset dgx-a100:nodes=2 --algo nccl
aws_p4de_2node_16xA100_efa_allreduce.txt|partly: 4 x 100G EFA per node, 2 GPUs per NIC (nics=4), EFA as on p4d (transport=efa-sendrecv: Simple only; the aws-ofi-nccl tuner's p5 step latency, assumed for p4de's EFA); NCCL may pick Tree|--topo clos:down=2x4,up=1x2,node=8,nics=4,rail=4,bw=100Gbps,node_bw=240GB/s,arch=ampere,transport=efa-sendrecv --algo nccl
aws_p5_1node_8xH100_nvswitch_allreduce.txt|yes: NVLS (NCCL's model picks it from about 1 MiB; the measured 483 GB/s is NVLS's)|--preset dgx-h100 --algo nccl
nccltests290_h100_1node_8gpu_nvswitch_allreduce.txt|yes: NVLS (per NVIDIA's reply)|--preset dgx-h100 --algo nccl
nccltests309_qoofyk_xe9680_h100_2node_ib_ndr_allreduce.txt|yes: NVLSTree (per NVIDIA's reply; NCCL's model picks it from 1 MiB)|--preset dgx-h100:nodes=2 --algo nccl
nccltests309_gjaion_h100_2node_ib400_allreduce_default.txt|yes: NVLSTree likely (466 GB/s, above the NICs' 400)|--preset dgx-h100:nodes=2 --algo nccl
nccltests309_gjaion_h100_4node_ib400_allreduce_default.txt|partly: from about 1 GiB NCCL 2.21.5's model prefers Ring (by 3%); the run (NCCL version not printed) kept NVLSTree's rate|--preset dgx-h100:nodes=4 --algo nccl
nccltests309_gjaion_h100_4node_ib400_allreduce_default.txt|the same, NVLSTree forced (NCCL_ALGO=NVLSTree)|--preset dgx-h100:nodes=4 --algo nccl:algo=NVLSTree
nccltests309_gjaion_h100_8node_ib400_allreduce_default.txt|partly: as 4 nodes|--preset dgx-h100:nodes=8 --algo nccl
nccltests309_gjaion_h100_8node_ib400_allreduce_default.txt|the same, NVLSTree forced|--preset dgx-h100:nodes=8 --algo nccl:algo=NVLSTree
oci_bm_gpu_h100_8_2node_roce_allreduce.txt|yes: NVLSTree likely (465 GB/s); RoCE as InfiniBand|--preset dgx-h100:nodes=2 --algo nccl
aws_p5_2node_16xH100_efa_allreduce.txt|partly: NVLSTree likely (487 GB/s); EFA's step latency as the aws-ofi-nccl tuner has it, NCCL's choice with the plugin's reported 75 us (transport=efa), 8 x 4 x 100G as 8 x 400G|--preset dgx-h100:nodes=2,transport=efa --algo nccl
coreweave_h100_96rank_ib_sharp_allreduce.txt|yes: IB SHARP, CollNetChain forced (NCCL_ALGO=COLLNETCHAIN in the manifest); 12 nodes inferred from busbw/algbw; 8 x 400G as DGX H100 (assumed)|--preset dgx-h100:nodes=12,sharp=1 --algo nccl:algo=CollNetChain
coreweave_a100_32rank_ib_sharp_allreduce.txt|partly: IB SHARP (its log lines); 4 nodes inferred; NICs not stated (DGX A100's 8 x HDR assumed); NCCL about 2.12|--preset dgx-a100:nodes=4,sharp=1 --algo nccl
coreweave_gb200_nvl72_1rack_72gpu_allreduce.txt|partly: one NVL72 rack; the example scripts set NCCL_NVLS_ENABLE=0, so NCCL's model with NVLS off (Ring)|--preset gb200-nvl72 --algo nccl:algo=Ring|Tree
coreweave_gb200_nvl72_1rack_72gpu_allreduce.txt|the same with NVLS allowed (NCCL's default)|--preset gb200-nvl72 --algo nccl
EOF
}

# Before: the same cluster with MPI's ring (one ring, alpha per message,
# no protocol), what topocc could say before its NCCL algorithms.
echo "| case | modelled | < 1 MiB | 1-256 MiB | >= 256 MiB | before (MPI ring): < 1 MiB | 1-256 MiB | >= 256 MiB |"
echo "|---|---|---:|---:|---:|---:|---:|---:|"
bands=$(mktemp) || exit 1
trap 'rm -f "$bands"' EXIT
cases | while IFS='|' read -r f why args; do
    before=$(echo "$args" | sed 's/--algo [^ ]*/--algo ring/')
    # shellcheck disable=SC2086
    out=$("$T" nccl-tests $args --compare "$D/$f" 2>&1) || { echo "| $f | $why | error: $(echo "$out" | tail -1) | | | | | |"; continue; }
    # shellcheck disable=SC2086
    old=$("$T" nccl-tests $before --compare "$D/$f" 2>&1)
    band() { echo "$1" | sed -n "s/^# median |error| $2 *: \\([0-9.]*%\\) over .*/\\1/p"; }
    printf '%s %s %s\n' "$(band "$out" '< 1 MiB')" "$(band "$out" '1 MiB .. 256 MiB')" "$(band "$out" '>= 256 MiB')" |
        tr -d '%' | sed 's/^ /- /; s/  / - /g; s/ $/ -/' >>"$bands"
    printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "${f%.txt}" "$why" "$(band "$out" '< 1 MiB')" \
        "$(band "$out" '1 MiB .. 256 MiB')" "$(band "$out" '>= 256 MiB')" "$(band "$old" '< 1 MiB')" \
        "$(band "$old" '1 MiB .. 256 MiB')" "$(band "$old" '>= 256 MiB')"
done
# The median over the cases of each band's median (a case without sizes in
# a band does not count there).
awk '{ for (i = 1; i <= 3; i++) if ($i != "-") { n[i]++; v[i, n[i]] = $i } }
     END {
       printf "| median over the cases | |"
       for (i = 1; i <= 3; i++) {
         m = n[i]
         for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[i, b] + 0 < v[i, a] + 0) { t = v[i, a]; v[i, a] = v[i, b]; v[i, b] = t }
         med = m % 2 ? v[i, (m + 1) / 2] : (v[i, m / 2] + v[i, m / 2 + 1]) / 2
         printf " %.1f%% (%d cases) |", med, m
       }
       print " | | |"
     }' "$bands"
