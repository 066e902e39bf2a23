"""Count the work of one denoiser forward (batch 1) and of one VAE decode for knowledge/diffusion_arch.csv.

Not part of the package: it needs torch and diffusers (`pip install torch diffusers==0.42.1 transformers`),
which the advisor itself does not. Models are built from their configs on the meta device (no weights,
no download) and run at 512, 768 and 1024 pixels, in fp16, under two counters:
  - torch.utils.flop_counter.FlopCounterMode: the FLOPs (`denoiser_tflop_*`, `vae_decode_tflop_*`);
  - OpCounter below, a TorchDispatchMode that sees every aten op of the eager forward: its FLOPs (the
    same formulas), its kernel class (convolution, matmul, attention, elementwise), the activation
    bytes it reads and writes, the weight bytes it reads, and the live activation bytes after it (a
    tensor is freed when its last Python reference goes, as in eager PyTorch). Attention is counted
    as one fused flash/memory-efficient kernel (FLOPs 4 x B x H x Lq x Lk x D; reads q, k, v, writes o),
    as SDPA runs it on a GPU; on meta tensors SDPA would fall back to the math path.
  The profile cells (`*_profile_*`) hold per class the FLOPs and the roofline sum over its kernels of
  max(FLOPs / R, bytes) at ridge points R = 16 ... 2048 FLOP/B, the elementwise bytes, the op count and
  the peak of live activations (tools.diffusion.DiffusionArch.profile_at reads them).
Usage: python benchmarks/diffusion_flops.py [model_id ... | vae4 | vae16]            FLOPs
       python benchmarks/diffusion_flops.py --profile [model_id ... | vae4 | vae16]  profile cells
"""
import json
import math
import sys
import weakref

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten
from torch.utils.flop_counter import flop_registry
from torch.utils.flop_counter import FlopCounterMode
from diffusers import UNet2DConditionModel, SD3Transformer2DModel, FluxTransformer2DModel, PixArtTransformer2DModel, AutoencoderKL

UNET_COMMON = dict(down_block_types=("CrossAttnDownBlock2D",)*3+("DownBlock2D",), up_block_types=("UpBlock2D",)+("CrossAttnUpBlock2D",)*3)
CFG = {
 "sd-1.5": ("unet", dict(cross_attention_dim=768, attention_head_dim=8, **UNET_COMMON), 4, 8, 77, 768),
 "sd-2.1": ("unet", dict(cross_attention_dim=1024, attention_head_dim=[5,10,20,20], use_linear_projection=True, **UNET_COMMON), 4, 8, 77, 1024),
 "sdxl-base-1.0": ("unet", dict(block_out_channels=(320,640,1280), down_block_types=("DownBlock2D","CrossAttnDownBlock2D","CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D","CrossAttnUpBlock2D","UpBlock2D"), attention_head_dim=[5,10,20], cross_attention_dim=2048,
        transformer_layers_per_block=[1,2,10], addition_embed_type="text_time", addition_time_embed_dim=256,
        projection_class_embeddings_input_dim=2816, use_linear_projection=True), 4, 8, 77, 2048),
 "sd3-medium": ("sd3", dict(sample_size=128, patch_size=2, in_channels=16, num_layers=24, attention_head_dim=64, num_attention_heads=24,
        joint_attention_dim=4096, caption_projection_dim=1536, pooled_projection_dim=2048, out_channels=16, pos_embed_max_size=192), 16, 8, 333, 4096),
 "sd3.5-large": ("sd3", dict(sample_size=128, patch_size=2, in_channels=16, num_layers=38, attention_head_dim=64, num_attention_heads=38,
        joint_attention_dim=4096, caption_projection_dim=2432, pooled_projection_dim=2048, out_channels=16, pos_embed_max_size=192, qk_norm="rms_norm"), 16, 8, 333, 4096),
 "sd3.5-medium": ("sd3", dict(sample_size=128, patch_size=2, in_channels=16, num_layers=24, attention_head_dim=64, num_attention_heads=24,
        joint_attention_dim=4096, caption_projection_dim=1536, pooled_projection_dim=2048, out_channels=16, pos_embed_max_size=384, qk_norm="rms_norm",
        dual_attention_layers=tuple(range(13))), 16, 8, 333, 4096),
 "flux.1-dev": ("flux", dict(patch_size=1, in_channels=64, num_layers=19, num_single_layers=38, attention_head_dim=128, num_attention_heads=24,
        joint_attention_dim=4096, pooled_projection_dim=768, guidance_embeds=True), 16, 8, 512, 4096),
 "flux.1-schnell": ("flux", dict(patch_size=1, in_channels=64, num_layers=19, num_single_layers=38, attention_head_dim=128, num_attention_heads=24,
        joint_attention_dim=4096, pooled_projection_dim=768, guidance_embeds=False), 16, 8, 256, 4096),
 "pixart-sigma-1024": ("pixart", dict(num_attention_heads=16, attention_head_dim=72, in_channels=4, out_channels=8, num_layers=28, cross_attention_dim=1152,
        sample_size=128, patch_size=2, caption_channels=4096, norm_type="ada_norm_single", use_additional_conditions=False, interpolation_scale=2), 4, 8, 300, 4096),
}

def run(mid, res):
    kind, cfg, lc, f, ntxt, dtxt = CFG[mid]
    h = res // f
    with torch.device("meta"):
        if kind == "unet":
            m = UNet2DConditionModel(**cfg)
            x, t, enc = torch.randn(1, lc, h, h), torch.tensor([10]), torch.randn(1, ntxt, dtxt)
            kw = {}
            if mid.startswith("sdxl"):
                kw = dict(added_cond_kwargs={"text_embeds": torch.randn(1, 1280), "time_ids": torch.randn(1, 6)})
            call = lambda: m(x, t, enc, **kw)
        elif kind == "sd3":
            m = SD3Transformer2DModel(**cfg)
            x = torch.randn(1, lc, h, h)
            call = lambda: m(hidden_states=x, encoder_hidden_states=torch.randn(1, ntxt, dtxt), pooled_projections=torch.randn(1, 2048), timestep=torch.tensor([10.]))
        elif kind == "flux":
            m = FluxTransformer2DModel(**cfg)
            n = (h // 2) ** 2
            kw = dict(guidance=torch.tensor([3.5])) if cfg["guidance_embeds"] else {}
            call = lambda: m(hidden_states=torch.randn(1, n, 64), encoder_hidden_states=torch.randn(1, ntxt, 4096), pooled_projections=torch.randn(1, 768),
                             timestep=torch.tensor([0.5]), img_ids=torch.zeros(n, 3), txt_ids=torch.zeros(ntxt, 3), **kw)
        else:
            m = PixArtTransformer2DModel(**cfg)
            call = lambda: m(torch.randn(1, lc, h, h), encoder_hidden_states=torch.randn(1, ntxt, 4096), timestep=torch.tensor([10]),
                             added_cond_kwargs={"resolution": None, "aspect_ratio": None})
        params = sum(p.numel() for p in m.parameters())
        leaves = sum(1 for x in m.modules() if not list(x.children()))
        with FlopCounterMode(display=False) as fc:
            call()
    return params, fc.get_total_flops(), leaves

def vae(lc, res):
    with torch.device("meta"):
        m = AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",)*4, up_block_types=("UpDecoderBlock2D",)*4,
                          block_out_channels=(128,256,512,512), layers_per_block=2, latent_channels=lc)
        z = torch.randn(1, lc, res // 8, res // 8)
        with FlopCounterMode(display=False) as fc:
            m.decode(z)
    return sum(p.numel() for p in m.decoder.parameters()), fc.get_total_flops()

RIDGES = (16, 32, 64, 128, 256, 512, 1024, 2048)

def _nbytes(t):
    return t.numel() * t.element_size()

class OpCounter(TorchDispatchMode):
    """Every aten op of an eager forward: FLOPs, activation bytes in+out, weight bytes, and live memory."""
    def __init__(self, params):
        super().__init__()
        self.param_ids = {id(p) for p in params}
        self.keep = []          # param-derived views (keeps their ids from being reused)
        self.ops = []           # (kind, flops, act_bytes, weight_bytes)
        self.live = 0
        self.peak = 0
        self.refs = {}          # storage key -> [count, bytes]
        self.pending_attn = None

    def _track(self, t):
        key = t.untyped_storage()._cdata
        ent = self.refs.get(key)
        if ent is None:
            ent = self.refs[key] = [0, t.untyped_storage().nbytes()]
            self.live += ent[1]
            self.peak = max(self.peak, self.live)
        ent[0] += 1
        weakref.finalize(t, self._release, key)

    def _release(self, key):
        ent = self.refs.get(key)
        if ent is None:
            return
        ent[0] -= 1
        if ent[0] == 0:
            self.live -= ent[1]
            del self.refs[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        ins = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        outs = [o for o in tree_flatten(out)[0] if isinstance(o, torch.Tensor)]
        from_param = any(id(a) in self.param_ids for a in ins)
        if func.is_view:
            if from_param:
                for o in outs:
                    self.param_ids.add(id(o))
                    self.keep.append(o)
            else:
                for o in outs:
                    if o.untyped_storage()._cdata in self.refs:
                        self._track(o)
            return out
        w = sum(_nbytes(a) for a in ins if id(a) in self.param_ids)
        act = sum(_nbytes(a) for a in ins if id(a) not in self.param_ids) + sum(_nbytes(o) for o in outs)
        if self.pending_attn is not None:
            flops, act = self.pending_attn
            self.pending_attn = None
            self.ops.append(("attn", flops, act, 0))
        else:
            fc = flop_registry.get(func.overloadpacket)
            flops = fc(*args, **kwargs, out_val=out) if fc else 0
            kind = "elem" if not flops else ("conv" if func.overloadpacket == torch.ops.aten.convolution else "mm")
            self.ops.append((kind, flops, act, w))
        mutable = func._schema.is_mutable
        for o in outs:
            if mutable and any(o.untyped_storage()._cdata == a.untyped_storage()._cdata for a in ins):
                continue
            self._track(o)
        return out

def install_sdpa(counter_ref):
    """Flash/memory-efficient attention as one op: 4 x B x H x Lq x Lk x D FLOPs, reads q, k, v, writes o."""
    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, **kw):
        q, k, v = query, key, value
        c = counter_ref()
        b_h = math.prod(q.shape[:-2])
        flops = 4 * b_h * q.shape[-2] * k.shape[-2] * q.shape[-1]
        nb = q.element_size()
        act = (q.numel() + k.numel() + v.numel() + q.numel() * v.shape[-1] // q.shape[-1]) * nb
        if c is not None:
            c.pending_attn = (flops, act)
        return torch.empty(*q.shape[:-1], v.shape[-1], dtype=q.dtype, device=q.device)
    F.scaled_dot_product_attention = sdpa

def summarise(c):
    out = {}
    for kind in ("conv", "mm"):
        ops = [(f, a) for k, f, a, _ in c.ops if k == kind]
        out[f"{kind}_tflop"] = sum(f for f, _ in ops) / 1e12
        for r in RIDGES:
            out[f"g{kind}_{r}"] = sum(max(f / r, a) for f, a in ops) / 1e9
    return out | {
            "elem_gb": sum(a for k, f, a, _ in c.ops if k == "elem") / 1e9,
            "attn_tflop": sum(f for k, f, a, _ in c.ops if k == "attn") / 1e12,
            "weight_gb": sum(w for *_, w in c.ops) / 1e9,
            "peak_gb": c.peak / 1e9, "ops": len(c.ops)}


DT = torch.float16
_CURRENT = [None]


def _inputs(mid, m, res):
    kind, cfg, lc, f, ntxt, dtxt = CFG[mid]
    h = res // f
    r = lambda *s: torch.randn(*s, device="meta", dtype=DT)  # noqa: E731
    t = lambda v: torch.tensor([v], device="meta")  # noqa: E731
    if kind == "unet":
        kw = dict(added_cond_kwargs={"text_embeds": r(1, 1280), "time_ids": r(1, 6)}) if mid.startswith("sdxl") else {}
        x, enc = r(1, lc, h, h), r(1, ntxt, dtxt)
        return lambda: m(x, t(10), enc, **kw)
    if kind == "sd3":
        x, enc, pool = r(1, lc, h, h), r(1, ntxt, dtxt), r(1, 2048)
        return lambda: m(hidden_states=x, encoder_hidden_states=enc, pooled_projections=pool, timestep=t(10.))
    if kind == "flux":
        n = (h // 2) ** 2
        kw = dict(guidance=t(3.5)) if cfg["guidance_embeds"] else {}
        x, enc, pool = r(1, n, 64), r(1, ntxt, 4096), r(1, 768)
        ids = torch.zeros(n, 3, device="meta"), torch.zeros(ntxt, 3, device="meta")
        return lambda: m(hidden_states=x, encoder_hidden_states=enc, pooled_projections=pool, timestep=t(0.5),
                         img_ids=ids[0], txt_ids=ids[1], **kw)
    x, enc = r(1, lc, h, h), r(1, ntxt, 4096)
    return lambda: m(x, encoder_hidden_states=enc, timestep=t(10), added_cond_kwargs={"resolution": None, "aspect_ratio": None})


def _measure(m, call):
    c = OpCounter(list(m.parameters()) + list(m.buffers()))
    _CURRENT[0] = c
    with torch.no_grad(), c:
        out = call()
        del out
    _CURRENT[0] = None
    return summarise(c)


def profile(mid):
    """Profile cells of one model (or 'vae4' / 'vae16') at 512, 768 and 1024 px: {res: 'key=value;...'}."""
    install_sdpa(lambda: _CURRENT[0])
    out = {}
    for res in (512, 768, 1024):
        if mid.startswith("vae"):
            lc = int(mid[3:])
            with torch.device("meta"):
                m = AutoencoderKL(in_channels=3, out_channels=3, down_block_types=("DownEncoderBlock2D",) * 4,
                                  up_block_types=("UpDecoderBlock2D",) * 4, block_out_channels=(128, 256, 512, 512),
                                  layers_per_block=2, latent_channels=lc)
            m = m.to(DT).eval()
            z = torch.randn(1, lc, res // 8, res // 8, device="meta", dtype=DT)
            d = _measure(m, lambda m=m, z=z: m.decode(z))
        else:
            kind, cfg = CFG[mid][:2]
            cls = {"unet": UNet2DConditionModel, "sd3": SD3Transformer2DModel, "flux": FluxTransformer2DModel,
                   "pixart": PixArtTransformer2DModel}[kind]
            with torch.device("meta"):
                m = cls(**cfg)
            m = m.to(DT).eval()
            d = _measure(m, _inputs(mid, m, res))
        out[res] = ";".join(f"{k}={v:.6g}" for k, v in d.items())
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--profile"]:
        for mid in sys.argv[2:] or list(CFG) + ["vae4", "vae16"]:
            print(mid, json.dumps(profile(mid)), flush=True)
        sys.exit(0)
    out = {}
    which = sys.argv[1:] or list(CFG)
    for mid in which:
        if mid.startswith("vae"):
            lc = int(mid[3:])
            out[mid] = {r: vae(lc, r) for r in (512, 768, 1024)}
        else:
            out[mid] = {r: run(mid, r) for r in (512, 768, 1024)}
        print(mid, out[mid], flush=True)
