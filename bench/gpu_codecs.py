#!/usr/bin/env python3
"""gpu_codecs.py - what gradient codecs cost on a GPU, measured with the
implementations training jobs use (PyTorch's DDP communication hooks and
its CUDA kernels), to check topocc's accelerator cost model
(docs/MODEL.md, "Compute"; docs/VALIDATION.md, "Codec costs on a GPU").

Needs a CUDA GPU, PyTorch and torchvision; it is not part of `make test`.

    python3 bench/gpu_codecs.py --out FILE.json

Two kinds of figure:

1. The hooks inside DDP (one process, world size 1, NCCL): ResNet-18 and
   ResNet-50 (torchvision, fp32, batch 32 of 224x224) train with each hook
   registered: allreduce_hook (the fp32 baseline), fp16_compress_hook,
   bf16_compress_hook, powerSGD_hook at ranks 1, 2, 4 and
   batched_powerSGD_hook at rank 4 (PowerSGDState: start_powerSGD_iter 2,
   error feedback and warm start on, min_compression_rate 2, the defaults
   otherwise). A wrapper around the hook synchronises the device before
   the hook and after its future completes: the wall time of a bucket's
   hook, launch overhead included, as the training loop meets it when the
   hook is on the critical path. A second pass under torch.profiler sums
   the device time of the kernels the hooks launch, and counts the device
   events of the iteration; a third times the iteration with the hook
   registered as is, unsynchronised, as a training loop runs it. With one
   process the all-reduce moves nothing, so hook minus allreduce_hook is
   the codec.
2. Kernels alone on a 25 MiB bucket (6,553,600 float32, DDP's default
   bucket_cap_mb): a copy (clone), the bf16 cast and back, torch.topk of 1%
   of |x| with its gather and scatter-add, an int8 quantization with a
   max-|x| scale. Timed with CUDA events, median of 50 after 5 warm-ups.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import traceback


def median_ms(fn, reps=50, warm=5):
    import torch
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times), "reps": reps}


def per_iter_ms(step, warm, iters):
    """Wall time of one training step, ms: warm steps, then iters timed."""
    import torch
    for _ in range(warm):
        step()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    torch.cuda.synchronize()
    return 1e3 * (time.perf_counter() - t0) / iters


def short_error(e):
    """The exception and its innermost frame, without the machine's paths."""
    tb = traceback.extract_tb(e.__traceback__)[-1]
    return "%s in %s, %s (line %d)" % (type(e).__name__, os.path.basename(tb.filename), tb.name, tb.lineno)


def machine():
    """The CPU model and core count, the GPU and its memory."""
    import torch
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    gpu = torch.cuda.get_device_properties(0)
    return "%s (%d GB), %d cores of %s" % (gpu.name, round(gpu.total_memory / 1e9), os.cpu_count() or 0, cpu)


def kernels_alone(d):
    import torch
    x = torch.randn(d, device="cuda", dtype=torch.float32)
    k = max(1, d // 100)
    out = {"d": d, "bytes": 4 * d}

    def copy():
        return x.clone()

    def cast():
        return x.to(torch.bfloat16).to(torch.float32)

    def topk():
        _, idx = torch.topk(x.abs(), k, sorted=False)
        vals = x[idx]
        dense = torch.zeros_like(x)
        dense.index_add_(0, idx, vals)
        return dense

    def topk_select_only():
        return torch.topk(x.abs(), k, sorted=False)

    def int8():
        s = x.abs().max() / 127.0
        q = torch.round(x / s).to(torch.int8)
        return q.to(torch.float32) * s

    for name, fn in [("copy", copy), ("bf16_cast_and_back", cast), ("topk_1pct_encode_decode", topk),
                     ("topk_1pct_select_only", topk_select_only), ("int8_quantize_dequantize", int8)]:
        out[name] = median_ms(fn)
    out["copy_GBps"] = 2 * 4 * d / (out["copy"]["median_ms"] * 1e-3) / 1e9
    return out


def ddp_hooks(model_name, iters, warm, batch):
    import torch
    import torch.distributed as dist
    import torchvision
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks as dh
    from torch.distributed.algorithms.ddp_comm_hooks import powerSGD_hook as ph
    from torch.nn.parallel import DistributedDataParallel as DDP

    def make_state(kind, rank):
        if kind in ("powersgd", "powersgd-batched"):
            return ph.PowerSGDState(process_group=None, matrix_approximation_rank=rank, start_powerSGD_iter=2,
                                    min_compression_rate=2, use_error_feedback=True, warm_start=True,
                                    random_seed=0)
        return None

    hooks = [("allreduce", dh.allreduce_hook, 0), ("fp16", dh.fp16_compress_hook, 0),
             ("bf16", dh.bf16_compress_hook, 0), ("powersgd", ph.powerSGD_hook, 1),
             ("powersgd", ph.powerSGD_hook, 2), ("powersgd", ph.powerSGD_hook, 4),
             ("powersgd-batched", ph.batched_powerSGD_hook, 4)]
    results = []
    torch.manual_seed(0)
    xin = torch.randn(batch, 3, 224, 224, device="cuda")
    yin = torch.randint(0, 1000, (batch,), device="cuda")
    for kind, hook, rank in hooks:
        rec = {"hook": kind, "rank": rank}
        try:
            net = getattr(torchvision.models, model_name)(weights=None).cuda()
            ddp = DDP(net, device_ids=[0])
            state = make_state(kind, rank)
            acc = {"wall": 0.0, "calls": 0, "on": False, "sizes": []}

            def wrapper(st, bucket, hook=hook, acc=acc):
                if acc["on"]:
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                with torch.profiler.record_function("codec_hook"):
                    fut = hook(st, bucket)
                    val = fut.wait()
                if acc["on"]:
                    torch.cuda.synchronize()
                    acc["wall"] += time.perf_counter() - t0
                    acc["calls"] += 1
                    acc["sizes"].append(int(bucket.buffer().numel()))
                f = torch.futures.Future()
                f.set_result(val)
                return f

            ddp.register_comm_hook(state, wrapper)
            lossf = torch.nn.CrossEntropyLoss()

            def step():
                ddp.zero_grad(set_to_none=False)
                lossf(ddp(xin), yin).backward()

            for _ in range(warm):
                step()
            acc["on"] = True
            rec["iter_ms"] = per_iter_ms(step, 0, iters)
            acc["on"] = False
            rec["hook_wall_ms_per_iter"] = 1e3 * acc["wall"] / iters
            rec["buckets_per_iter"] = acc["calls"] / iters
            rec["bucket_numel"] = acc["sizes"][: max(1, acc["calls"] // iters)]
            # device time of the hooks' kernels
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(iters):
                    step()
                torch.cuda.synchronize()
            rows = {}
            for ev in prof.key_averages():
                if "codec_hook" in ev.key:
                    dt = getattr(ev, "device_time_total", None)
                    if dt is None:
                        dt = getattr(ev, "cuda_time_total", 0)
                    rows[ev.key + ("@" + str(getattr(ev, "device_type", "")))] = {
                        "device_us_per_iter": dt / iters, "cpu_us_per_iter": ev.cpu_time_total / iters,
                        "count": ev.count}
            rec["profiler"] = rows
            ktot = 0.0
            for ev in prof.key_averages():
                if str(getattr(ev, "device_type", "")).endswith("CUDA") and "codec_hook" not in ev.key:
                    ktot += getattr(ev, "self_device_time_total", getattr(ev, "self_cuda_time_total", 0))
            rec["all_kernels_device_us_per_iter"] = ktot / iters
            nk = sum(1 for ev in prof.events() if str(getattr(ev, "device_type", "")).endswith("CUDA"))
            rec["device_events_per_iter"] = nk / iters
            # the hook as a training loop meets it: registered as is, no synchronisation
            net2 = getattr(torchvision.models, model_name)(weights=None).cuda()
            ddp2 = DDP(net2, device_ids=[0])
            ddp2.register_comm_hook(make_state(kind, rank), hook)

            def step2():
                ddp2.zero_grad(set_to_none=False)
                lossf(ddp2(xin), yin).backward()

            rec["iter_ms_unwrapped"] = per_iter_ms(step2, warm, iters)
            del ddp2, net2
            del ddp, net
        except Exception as e:
            rec["error"] = short_error(e)
        results.append(rec)
        print(model_name, json.dumps({k: v for k, v in rec.items() if k != "profiler"}), flush=True)
        torch.cuda.empty_cache()
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--warm", type=int, default=6)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--models", default="resnet18,resnet50")
    a = ap.parse_args()
    import torch
    import torch.distributed as dist
    res = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
           "gpu": torch.cuda.get_device_name(0), "cudnn": torch.backends.cudnn.version(),
           "date": time.strftime("%Y-%m-%d"), "machine": machine(),
           "command": "python3 bench/gpu_codecs.py --models %s --iters %d --warm %d --batch %d --out FILE" %
                      (a.models, a.iters, a.warm, a.batch)}
    try:
        import torchvision
        res["torchvision"] = torchvision.__version__
    except Exception:
        res["torchvision"] = None
    try:
        res["kernels"] = kernels_alone(6553600)
        print("kernels", json.dumps(res["kernels"]), flush=True)
    except Exception as e:
        res["kernels_error"] = short_error(e)
        print(res["kernels_error"], flush=True)
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1)
    torch.cuda.set_device(0)
    for m in a.models.split(","):
        res[m] = ddp_hooks(m, a.iters, a.warm, a.batch)
    dist.destroy_process_group()
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
