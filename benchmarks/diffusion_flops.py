"""Count the FLOPs of one denoiser forward (batch 1) and of one VAE decode for knowledge/diffusion_arch.csv.

Not part of the package: it needs torch and diffusers (`pip install torch diffusers==0.42.1 transformers`),
which the advisor itself does not. Models are built from their configs on the meta device (no weights,
no download) and run under torch.utils.flop_counter.FlopCounterMode at 512, 768 and 1024 pixels.
Usage: python benchmarks/diffusion_flops.py [model_id ... | vae4 | vae16]
"""
import json, sys, torch
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
            x = torch.randn(1, lc, h, h); t = torch.tensor([10]); enc = torch.randn(1, ntxt, dtxt)
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

if __name__ == "__main__":
    out = {}
    which = sys.argv[1:] or list(CFG)
    for mid in which:
        if mid.startswith("vae"):
            lc = int(mid[3:])
            out[mid] = {r: vae(lc, r) for r in (512, 768, 1024)}
        else:
            out[mid] = {r: run(mid, r) for r in (512, 768, 1024)}
        print(mid, out[mid], flush=True)
