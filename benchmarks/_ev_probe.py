import torch, time, traceback
s = torch.cuda.current_stream()
a = torch.randn(1024, 1024, device="cuda", dtype=torch.bfloat16)
outs = [torch.empty(1024, 1024, device="cuda", dtype=torch.bfloat16) for _ in range(4)]
row = torch.zeros(8, dtype=torch.int64, device="cuda")
def trial(name, pre, mode):
    try:
        e1 = torch.cuda.Event(enable_timing=True, external=True)
        e2 = torch.cuda.Event(enable_timing=True, external=True)
        if pre:
            e1.record(s); e2.record(s); torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        side = torch.cuda.Stream(); side.wait_stream(s)
        with torch.cuda.stream(side):
            g.capture_begin(capture_error_mode=mode)
            e1.record(side)
            row.add_(1)
            e2.record(side)
            g.capture_end()
        s.wait_stream(side)
        for _ in range(3):
            torch.matmul(a, a, out=outs[0]); g.replay()
        torch.cuda.synchronize()
        print(name, "ok", e1.elapsed_time(e2))
    except Exception as exc:
        print(name, "FAILED", str(exc).splitlines()[0])
        torch.cuda.synchronize()
import sys
pre, mode = sys.argv[1] == "1", sys.argv[2]
trial(f"pre={pre} mode={mode}", pre, mode)
