#!/bin/sh
# nccl_validate.sh - topocc nccl-tests --compare on the published nccl-tests
# results in tests/data/nccl-tests/ (docs/VALIDATION.md, "nccl-tests"): one
# line per case with the median |busbw error| per size band, as a Markdown
# table. Cases whose measured run used what topocc does not model
# (another transport's costs, a NIC count the source does not state) are
# listed with the reason and compared all the same, so the gap shows. No
# constant is fitted on NCCL's own transports; the network plugins' are
# fitted on one file of each platform (below). Usage:
# bench/nccl_validate.sh [BUILD_DIR]
set -u
B=${1:-build}
T="$B/topocc"
D="$(dirname "$0")/../tests/data/nccl-tests"
[ -x "$T" ] || { echo "nccl_validate.sh: build first (make build)" >&2; exit 2; }

# file | transport | modelled? | topocc arguments. The transport is NCCL's
# own (nvlink: inside a node; ib: InfiniBand; roce: RoCE through NCCL's
# verbs transport, NCCL_NET_PLUGIN=none) or a network plugin NCCL does not
# ship (efa: aws-ofi-nccl; gib: Google's gIB; tcpxo: GPUDirect-TCPXO), whose
# costs are the plugin's, not NCCL's. Every file in tests/data/nccl-tests/
# that nccl-tests --compare can read is here (INDEX.md names the one it
# cannot).
cases() {
cat <<'EOF'
nccltests309_gjaion_h100_2node_ib400_allreduce_ring_minctas24_qps2.txt|ib|yes: Ring forced (NCCL_ALGO=Ring), NCCL_MIN_CTAS=24 (mincta=24), NCCL's choice of protocol; its GPU-NIC path phb (nic_path=phb: LL128 off across nodes), inferred from the 2-node Ring run's 1-4 MiB times, Simple's (LL128's would be 70-80% faster)|--preset dgx-h100:nodes=2,nic_path=phb --algo nccl:algo=Ring,mincta=24
nccltests309_gjaion_h100_2node_ib400_allreduce_ring_minctas24_qps2.txt|ib|the same with a DGX board's GPU-NIC path (pxb: LL128 on)|--preset dgx-h100:nodes=2 --algo nccl:algo=Ring,mincta=24
meta_gcm_a100_1node_8gpu_allreduce_fixture.txt|nvlink|yes: one A100 node (no NVLS on A100)|--preset dgx-a100 --algo nccl
oci_bm_gpu4_8_a100_1node_8gpu_allreduce_10GiB_ubuntu.txt|nvlink|yes: one A100 node|--preset dgx-a100 --algo nccl
gcp_a3ultra_2node_1gpu_H200_roce_allreduce.txt|gib|yes: 2 GPUs, one 400G NIC each|--topo clos:down=2,up=1,bw=400Gbps,arch=hopper --algo nccl
gcp_a3ultra_2node_1gpu_H200_roce_allgather.txt|gib|yes: 2 GPUs, one 400G NIC each|--topo clos:down=2,up=1,bw=400Gbps,arch=hopper --algo nccl --op allgather
gcp_a4_2node_16xB200_roce_allgather.txt|gib|yes: all-gather between nodes runs Ring|--preset dgx-b200:nodes=2 --algo nccl --op allgather
meta_gcm_a100_2node_16gpu_allreduce_fixture.txt|ib|partly: fabric not stated (DGX A100 assumed); NCCL may pick Tree|--preset dgx-a100:nodes=2 --algo nccl
oci_bm_gpu4_8_a100_2node_roce_allreduce_10GiB.txt|roce|partly: 16 x 100G RoCE as 8 x 200G; NCCL may pick Tree|--preset dgx-a100:nodes=2 --algo nccl
aws_p4de_2node_16xA100_efa_allreduce.txt|efa|partly: 4 x 100G EFA per node, 2 GPUs per NIC (nics=4), EFA as on p4d (transport=efa-sendrecv: Simple only; the aws-ofi-nccl tuner's p5 step latency, assumed for p4de's EFA); NCCL may pick Tree|--topo clos:down=2x4,up=1x2,node=8,nics=4,rail=4,bw=100Gbps,node_bw=240GB/s,arch=ampere,transport=efa-sendrecv --algo nccl
aws_p5_1node_8xH100_nvswitch_allreduce.txt|nvlink|yes: NVLS (NCCL's model picks it from about 1 MiB; the measured 483 GB/s is NVLS's)|--preset dgx-h100 --algo nccl
nccltests290_h100_1node_8gpu_nvswitch_allreduce.txt|nvlink|yes: NVLS (per NVIDIA's reply)|--preset dgx-h100 --algo nccl
nccltests309_qoofyk_xe9680_h100_2node_ib_ndr_allreduce.txt|ib|yes: NVLSTree (per NVIDIA's reply; NCCL's model picks it from 1 MiB)|--preset dgx-h100:nodes=2 --algo nccl
nccltests309_gjaion_h100_2node_ib400_allreduce_default.txt|ib|yes: NVLSTree likely (466 GB/s, above the NICs' 400); GPU-NIC path phb, as the cluster's Ring run|--preset dgx-h100:nodes=2,nic_path=phb --algo nccl
nccltests309_gjaion_h100_4node_ib400_allreduce_default.txt|ib|partly: from about 1 GiB NCCL 2.21.5's model prefers Ring (by 3%); the run (NCCL version not printed) kept NVLSTree's rate; GPU-NIC path phb, as the cluster's Ring run|--preset dgx-h100:nodes=4,nic_path=phb --algo nccl
nccltests309_gjaion_h100_4node_ib400_allreduce_default.txt|ib|the same, NVLSTree forced (NCCL_ALGO=NVLSTree)|--preset dgx-h100:nodes=4,nic_path=phb --algo nccl:algo=NVLSTree
nccltests309_gjaion_h100_8node_ib400_allreduce_default.txt|ib|partly: as 4 nodes|--preset dgx-h100:nodes=8,nic_path=phb --algo nccl
nccltests309_gjaion_h100_8node_ib400_allreduce_default.txt|ib|the same, NVLSTree forced|--preset dgx-h100:nodes=8,nic_path=phb --algo nccl:algo=NVLSTree
nccltests309_gjaion_h100_8node_ib400_allreduce_default.txt|ib|the same with a DGX board's GPU-NIC path (pxb: LL128 on)|--preset dgx-h100:nodes=8 --algo nccl
oci_bm_gpu_h100_8_2node_roce_allreduce.txt|roce|yes: NVLSTree likely (465 GB/s); RoCE as InfiniBand|--preset dgx-h100:nodes=2 --algo nccl
aws_p5_2node_16xH100_efa_allreduce.txt|efa|partly: NVLSTree likely (487 GB/s); EFA's step latency as the aws-ofi-nccl tuner has it, NCCL's choice with the plugin's reported 75 us (transport=efa), 8 x 4 x 100G as 8 x 400G|--preset dgx-h100:nodes=2,transport=efa --algo nccl
coreweave_h100_96rank_ib_sharp_allreduce.txt|ib|yes: IB SHARP, CollNetChain forced (NCCL_ALGO=COLLNETCHAIN in the manifest); 12 nodes inferred from busbw/algbw; 8 x 400G as DGX H100 (assumed)|--preset dgx-h100:nodes=12,sharp=1 --algo nccl:algo=CollNetChain
coreweave_a100_32rank_ib_sharp_allreduce.txt|ib|partly: IB SHARP (its log lines); 4 nodes inferred; NICs not stated (DGX A100's 8 x HDR assumed); NCCL about 2.12|--preset dgx-a100:nodes=4,sharp=1 --algo nccl
coreweave_gb200_nvl72_1rack_72gpu_allreduce.txt|nvlink|partly: one NVL72 rack; the example scripts set NCCL_NVLS_ENABLE=0, so NCCL's model with NVLS off (Ring)|--preset gb200-nvl72 --algo nccl:algo=Ring|Tree
coreweave_gb200_nvl72_1rack_72gpu_allreduce.txt|nvlink|the same with NVLS allowed (NCCL's default)|--preset gb200-nvl72 --algo nccl
nccltests309_qoofyk_h100_4node_ib_ndr_allreduce.txt|ib|yes: NVLSTree likely (as the 2-node run of the same user); hosts virtualised, with a topology file|--preset dgx-h100:nodes=4 --algo nccl
nccltests309_gjaion_h100_8node_ib400_allreduce_minctas24_qps2.txt|ib|partly: NCCL_MIN_CTAS=24 (mincta=24); NCCL_IB_QPS_PER_CONNECTION=2 not modelled; GPU-NIC path phb, as the cluster's Ring run|--preset dgx-h100:nodes=8,nic_path=phb --algo nccl:mincta=24
nccltests309_gjaion_h100_8node_ib400_allreduce_minctas24_qps2.txt|ib|the same with a DGX board's GPU-NIC path (pxb: LL128 on)|--preset dgx-h100:nodes=8 --algo nccl:mincta=24
oci_bm_gpu4_8_a100_2node_roce_allreduce_10GiB_ubuntu.txt|roce|partly: 16 x 100G RoCE as 8 x 200G; the run set none of the NCCL_IB_* settings of the other OCI A100 run and reached a quarter of its rate|--preset dgx-a100:nodes=2 --algo nccl
aws_p4d_2node_16xA100_efa_allreduce_nccl2.9.9.txt|efa|partly: as p4de (4 x 100G EFA, transport=efa-sendrecv); NCCL 2.9.9, older than the pinned 2.21.5|--topo clos:down=2x4,up=1x2,node=8,nics=4,rail=4,bw=100Gbps,node_bw=240GB/s,arch=ampere,transport=efa-sendrecv --algo nccl
aws_p5_2node_16xH100_efa_allreduce_eks_partial.txt|efa|partly: as the p5 pair above, an older stack (NCCL 2.18.5, aws-ofi-nccl 1.7.3)|--preset dgx-h100:nodes=2,transport=efa --algo nccl
gcp_a4_2node_1gpu_B200_roce_allgather.txt|gib|partly: 2 GPUs, one NIC each (400G: the source does not state the speed, nor whether a rank used 1 or 2 NICs)|--topo clos:down=2,up=1,bw=400Gbps,arch=blackwell --algo nccl --op allgather
gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt|tcpxo|partly: GPUDirect-TCPXO's costs are not modelled (NCCL's InfiniBand model); 8 x 200G NICs (A3 Mega: 8 GPU NICs, 1,600 Gb/s: docs/VALIDATION.md), otherwise the DGX H100 preset|--topo clos:down=2x8,up=1x2,bw=200Gbps,lat=50ns,hop_lat=300ns,node=8,node_bw=370.8GB/s,node_lat=250ns,node_hop_lat=0ns,node_reduce=1,rail=8,arch=hopper --algo nccl
gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt|tcpxo|the same with the DGX H100 preset's 8 x 400G, as before the NIC speed was sourced|--preset dgx-h100:nodes=2 --algo nccl
gcp_a4_1node_2xB200_nvlink_allgather_partial.txt|nvlink|partly: 2 of a B200 node's GPUs (NCCL 2.26.6; Blackwell is newer than the pinned 2.21.5)|--preset dgx-b200 -g 2 --algo nccl --op allgather
coreweave_gb200_2rack_144gpu_allreduce.txt|ib|partly: two NVL72 racks over InfiniBand; NICs per tray not stated (the preset's 4 x 400G), SHARP and NVLS settings of the run not stated|--preset gb200-nvl72:nodes=2 --algo nccl
oci_bm_gpu_h200_8_2node_roce_allreduce.txt|roce|partly: 8 RoCE NICs a node (the source), 400G each assumed (the DGX H200 preset's); the NCCL settings of OCI's sample script not shown; NVLSTree likely (486 GB/s); RoCE as InfiniBand|--preset dgx-h200:nodes=2 --algo nccl
nebius_h200_2node_16gpu_ib_allreduce_runai.txt|ib|partly: NICs not stated (the DGX H200 preset's 8 x 400G NDR assumed); NCCL_BUFFSIZE=8 MiB (buffsize=8388608); NCCL_IB_QPS_PER_CONNECTION=2 not modelled; NCCL 2.23.4 from the image tag|--preset dgx-h200:nodes=2 --algo nccl:buffsize=8388608
nebius_h100_2node_16gpu_ib_allreduce_skypilot.txt|ib|partly: 8 InfiniBand NICs a node (UCX_NET_DEVICES), 400G inferred from the page's ib_send_bw (353 Gb/s); the DGX H100 preset otherwise; NCCL 2.23.4 from the image tag|--preset dgx-h100:nodes=2 --algo nccl
gcp_a3ultra_2node_16xH200_roce_allgather_skypilot.txt|gib|yes: two a3-ultragpu-8g (8 x 400G NICs each, as the DGX H200 preset); all-gather between nodes runs Ring|--preset dgx-h200:nodes=2 --algo nccl --op allgather
gcp_a3ultra_2node_16xH200_roce_allgather_gkepod.txt|gib|partly: GCP's test pods; the page applies GCP's A4 manifest but prints H200 devices (A3 Ultra assumed, as SkyPilot's run); NCCL 2.26.6|--preset dgx-h200:nodes=2 --algo nccl --op allgather
oci_bm_gpu_b4_8_a100_2node_roce_allreduce_oke.txt|roce|partly: 16 RDMA NICs a node (NCCL_IB_HCA), speed not stated: 16 x 100G assumed, as 8 x 200G (as the other OCI A100 files); NCCL_IB_QPS_PER_CONNECTION=4 not modelled; NCCL 2.29.3, newer than the pinned 2.21.5; NCCL may pick Tree|--preset dgx-a100:nodes=2 --algo nccl
oci_a100_40gb_2node_roce_allreduce_oke_kueue_nccl2.25.1.txt|roce|partly: as the OKE BM.GPU.B4.8 run; the shape not stated (BM.GPU4.8 or BM.GPU.B4.8, 16 RDMA NICs each); NCCL 2.25.1|--preset dgx-a100:nodes=2 --algo nccl
ncclcluster_h100_1node_8gpu_nvswitch_allreduce.txt|nvlink|yes: one HGX H100 node (8 x H100 80GB HBM3), NCCL's choice; NCCL 2.29.2, newer than the pinned 2.21.5; NVLS likely (482 GB/s)|--preset dgx-h100 --algo nccl -d double
ncclcluster_h100_1node_8gpu_nvswitch_allgather.txt|nvlink|yes: one HGX H100 node (8 x H100 80GB HBM3), NCCL's choice; NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100 --algo nccl --op allgather -d double
ncclcluster_h100_1node_8gpu_nvswitch_reducescatter.txt|nvlink|yes: one HGX H100 node (8 x H100 80GB HBM3), NCCL's choice; NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100 --algo nccl --op reducescatter -d double
ncclcluster_h100_1node_8gpu_nvswitch_alltoall.txt|nvlink|yes: one HGX H100 node (8 x H100 80GB HBM3), NCCL's choice; NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100 --algo nccl --op alltoall -d double
ncclcluster_h100_1node_8gpu_nvswitch_sendrecv.txt|nvlink|yes: one HGX H100 node (8 x H100 80GB HBM3), NCCL's choice; NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100 --algo nccl --op sendrecv -d double
ncclcluster_h100_10node_80gpu_allreduce.txt|ib|partly: 10 HGX H100 nodes; NICs and fabric not stated (the DGX H100 preset's 8 x 400G InfiniBand assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 --algo nccl -d double
ncclcluster_h100_10node_80gpu_allgather.txt|ib|partly: 10 HGX H100 nodes; NICs and fabric not stated (the DGX H100 preset's 8 x 400G InfiniBand assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 --algo nccl --op allgather -d double
ncclcluster_h100_10node_80gpu_reducescatter.txt|ib|partly: 10 HGX H100 nodes; NICs and fabric not stated (the DGX H100 preset's 8 x 400G InfiniBand assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 --algo nccl --op reducescatter -d double
ncclcluster_h100_10node_80gpu_alltoall.txt|ib|partly: 10 HGX H100 nodes; NICs and fabric not stated (the DGX H100 preset's 8 x 400G InfiniBand assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 --algo nccl --op alltoall -d double
ncclcluster_h100_10node_80gpu_sendrecv.txt|ib|partly: 10 HGX H100 nodes; NICs and fabric not stated (the DGX H100 preset's 8 x 400G InfiniBand assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 --algo nccl --op sendrecv -d double
ncclcluster_h100_10node_1gpu_allreduce.txt|ib|partly: one GPU of each of 10 HGX H100 nodes, each with its NIC (-g 1); NICs and fabric not stated (the DGX H100 preset's 400G InfiniBand NIC assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 -g 1 --algo nccl -d double
ncclcluster_h100_10node_1gpu_allgather.txt|ib|partly: one GPU of each of 10 HGX H100 nodes, each with its NIC (-g 1); NICs and fabric not stated (the DGX H100 preset's 400G InfiniBand NIC assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 -g 1 --algo nccl --op allgather -d double
ncclcluster_h100_10node_1gpu_reducescatter.txt|ib|partly: one GPU of each of 10 HGX H100 nodes, each with its NIC (-g 1); NICs and fabric not stated (the DGX H100 preset's 400G InfiniBand NIC assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 -g 1 --algo nccl --op reducescatter -d double
ncclcluster_h100_10node_1gpu_alltoall.txt|ib|partly: one GPU of each of 10 HGX H100 nodes, each with its NIC (-g 1); NICs and fabric not stated (the DGX H100 preset's 400G InfiniBand NIC assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 -g 1 --algo nccl --op alltoall -d double
ncclcluster_h100_10node_1gpu_sendrecv.txt|ib|partly: one GPU of each of 10 HGX H100 nodes, each with its NIC (-g 1); NICs and fabric not stated (the DGX H100 preset's 400G InfiniBand NIC assumed); NCCL 2.29.2, newer than the pinned 2.21.5|--preset dgx-h100:nodes=10 -g 1 --algo nccl --op sendrecv -d double
ncclcluster_h100_2node_16gpu_alltoall.txt|ib|partly: 2 of the same cluster's nodes; NICs and fabric not stated (the DGX H100 preset's 8 x 400G InfiniBand assumed); NCCL 2.29.2|--preset dgx-h100:nodes=2 --algo nccl --op alltoall -d double
ncclcluster_h100_2node_16gpu_sendrecv.txt|ib|partly: 2 of the same cluster's nodes; NICs and fabric not stated (the DGX H100 preset's 8 x 400G InfiniBand assumed); NCCL 2.29.2|--preset dgx-h100:nodes=2 --algo nccl --op sendrecv -d double
liplus_a100_1node_8gpu_nvlink_sendrecv.txt|nvlink|partly: the page's 8 A100 GPUs with 600 GB/s NVLink each as an HGX A100 board (NVSwitch assumed); NCCL version not printed|--preset dgx-a100 --algo nccl --op sendrecv
yumibyte_modal_a100_40gb_1node_8gpu_allreduce.txt|nvlink|partly: 8 A100-SXM4-40GB of one Modal node as an HGX A100 board (NVSwitch assumed); one process drives the 8 GPUs (-g 8); NCCL 2.29.3, newer than the pinned 2.21.5|--preset dgx-a100 --algo nccl
EOF
}

# Calibration of the network plugins (docs/VALIDATION.md, "Fit half and
# held-out half"). A plugin's per-message costs and the share of the line
# rate it reaches are not published, so they are fitted (nccl-tests --fit:
# net_lat= and net_eff=) on one file of each platform, the fit half, and
# the platform's other files are predicted with those constants, the
# held-out half. The rule, set before any fit: the fit file is the
# platform's all-reduce run with the most rows (its all-gather run with the
# most where it has no all-reduce run). NCCL's own transports are not
# fitted: all their files are held out.
platform_of() {
    case "$1" in
    aws_p4d_* | aws_p4de_*) echo efa-p4d ;;
    aws_p5_2node_*) echo efa-p5 ;;
    gcp_a3ultra_*) echo gib-a3ultra ;;
    gcp_a4_2node_*) echo gib-a4 ;;
    gcp_a3mega_*) echo tcpxo-a3mega ;;
    *) echo "" ;;
    esac
}
fit_files() {
cat <<'EOF'
efa-p4d|aws_p4d_2node_16xA100_efa_allreduce_nccl2.9.9.txt
efa-p5|aws_p5_2node_16xH100_efa_allreduce.txt
gib-a3ultra|gcp_a3ultra_2node_1gpu_H200_roce_allreduce.txt
gib-a4|gcp_a4_2node_1gpu_B200_roce_allgather.txt
tcpxo-a3mega|gcp_a3mega_2node_16xH100_tcpxo_allreduce.txt
EOF
}
work=$(mktemp -d) || exit 1
trap 'rm -rf "$work"' EXIT
bands="$work/bands"
: >"$bands"
: >"$work/fits"
# the constants of each platform, fitted on its fit file with that file's
# first row of arguments
fit_files | while IFS='|' read -r pf ff; do
    args=$(cases | awk -F'|' -v f="$ff" '$1 == f { sub(/^[^|]*\|[^|]*\|[^|]*\|/, ""); print; exit }')
    # shellcheck disable=SC2086
    keys=$("$T" nccl-tests $args --compare "$D/$ff" --fit 2>&1 | sed -n 's/^# fit to [^:]*: \(net_lat=[^ ]*\) .*/\1/p')
    [ -n "$keys" ] || { echo "nccl_validate.sh: the fit of $pf on $ff failed" >&2; exit 1; }
    echo "$pf|$ff|$keys" >>"$work/fits"
done || exit 1
calibrated() { # ARGS KEYS: the --preset or --topo value with the keys added
    echo "$1" | sed "s#\(--preset\|--topo\) \([^ :]*:[^ ]*\)#\1 \2,$2#"
}

# Before: the same cluster with MPI's ring (one ring, alpha per message,
# no protocol), what topocc could say before its NCCL algorithms.
echo "| case | transport | half | modelled | < 1 MiB | 1-256 MiB | >= 256 MiB | before (MPI ring): < 1 MiB | 1-256 MiB | >= 256 MiB |"
echo "|---|---|---|---|---:|---:|---:|---:|---:|---:|"
seen=" "
band() { echo "$1" | sed -n "s/^# median |error| $2 *: \\([0-9.]*%\\) over .*/\\1/p"; }
bands_of() { # OUTPUT: the three bands, '-' where empty, without '%'
    for b in '< 1 MiB' '1 MiB .. 256 MiB' '>= 256 MiB'; do
        v=$(band "$1" "$b" | tr -d '%')
        printf ' %s' "${v:--}"
    done
}
row() { # FILE TRANSPORT HALF WHY OUT OLD
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${1%.txt}" "$2" "$3" "$4" "$(band "$5" '< 1 MiB')" \
        "$(band "$5" '1 MiB .. 256 MiB')" "$(band "$5" '>= 256 MiB')" "$(band "$6" '< 1 MiB')" \
        "$(band "$6" '1 MiB .. 256 MiB')" "$(band "$6" '>= 256 MiB')"
}
cases | while IFS='|' read -r f tr why args; do
    before=$(echo "$args" | sed 's/--algo [^ ]*/--algo ring/')
    # A file compared twice (another configuration of the same run) counts
    # once in the medians, with its first row.
    case "$seen" in *" $f "*) counted=0 ;; *) counted=1; seen="$seen$f " ;; esac
    pf=$(platform_of "$f")
    half=held-out
    run_args=$args
    if [ -n "$pf" ]; then
        fit=$(awk -F'|' -v p="$pf" '$1 == p' "$work/fits")
        keys=${fit##*|}
        ff=$(echo "$fit" | cut -d'|' -f2)
        [ "$ff" = "$f" ] && half=fit
        run_args=$(calibrated "$args" "$keys")
        why="$why; calibrated: $keys (fitted on ${ff%.txt})"
    fi
    # shellcheck disable=SC2086
    out=$("$T" nccl-tests $run_args --compare "$D/$f" 2>&1) || { echo "| $f | $tr | $half | $why | error: $(echo "$out" | tail -1) | | | | | |"; continue; }
    # shellcheck disable=SC2086
    old=$("$T" nccl-tests $before --compare "$D/$f" 2>&1)
    # whether the source states the configuration modelled ("yes") or
    # topocc assumes part of it ("partly")
    stated=${why%%:*}
    [ $counted = 1 ] && echo "$tr $half $stated$(bands_of "$out")" >>"$bands"
    [ $counted = 1 ] || why="$why (not counted in the medians)"
    row "$f" "$tr" "$half" "$why" "$out" "$old"
    if [ -n "$pf" ]; then
        # the same without calibration: the transport's own values
        # shellcheck disable=SC2086
        raw=$("$T" nccl-tests $args --compare "$D/$f" 2>&1)
        [ $counted = 1 ] && echo "$tr raw $stated$(bands_of "$raw")" >>"$bands"
        row "$f" "$tr" "-" "the same without calibration: the transport's own step latencies and the whole line rate (counted only in the medians without calibration)" "$raw" "$old"
    fi
done
# The median over the files of each band's median (a file without sizes in
# a band does not count there).
median_row() { # LABEL AWK-CONDITION-ON-$1-$2-$3 (transport, half, stated)
    awk -v label="$1" "$2"' { for (i = 4; i <= 6; i++) if ($i != "-") { n[i]++; v[i, n[i]] = $i } }
     END {
       printf "| %s | | | |", label
       for (i = 4; i <= 6; i++) {
         m = n[i]
         if (!m) { printf " |"; continue }
         for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[i, b] + 0 < v[i, a] + 0) { t = v[i, a]; v[i, a] = v[i, b]; v[i, b] = t }
         med = m % 2 ? v[i, (m + 1) / 2] : (v[i, m / 2] + v[i, m / 2 + 1]) / 2
         printf " %.1f%% (%d) |", med, m
       }
       print " | | |"
     }' "$bands"
}
own='($1 == "nvlink" || $1 == "ib" || $1 == "roce")'
plug='($1 == "efa" || $1 == "gib" || $1 == "tcpxo")'
median_row "median, held-out half: every file no constant was fitted on" '$2 == "held-out"'
median_row "median, held-out half, NCCL's own transports (nvlink, ib, roce)" "\$2 == \"held-out\" && $own"
median_row "median, held-out half, network plugins (efa, gib, tcpxo), with their platform's fitted constants" "\$2 == \"held-out\" && $plug"
median_row "median, held-out half, files whose configuration the source states (modelled: yes)" '$2 == "held-out" && $3 == "yes"'
median_row "median, held-out half, files with part of the configuration assumed (modelled: partly)" '$2 == "held-out" && $3 == "partly"'
median_row "median, fit half: network plugins, with the constants fitted on each" '$2 == "fit"'
median_row "median over every file without calibration" "(\$2 == \"held-out\" && $own) || \$2 == \"raw\""
median_row "median, network plugins without calibration" '$2 == "raw"'
echo
echo "| platform | fit file | fitted (nccl-tests --fit) |"
echo "|---|---|---|"
while IFS='|' read -r pf ff keys; do
    echo "| $pf | ${ff%.txt} | $keys |"
done <"$work/fits"
