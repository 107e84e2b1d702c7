"""Architecture families, one module each (or one per tight group sharing a declaration).

A family module ``symgpt.families.<name>`` holds together its ``FAMILIES`` (each a
:class:`~symgpt.families.base.Family`: flag defaults, sizes, help, and its builder named lazily),
its config.json ``READERS`` (``model_type`` -> :class:`~symgpt.families.fields.Reader`) and its
``PRESETS`` (:class:`~symgpt.families.base.Preset` rows with their public sources). Its top level
imports only light modules (``base``, ``fields``, ``decoders``, ``symgpt.core``): listing every
family, reader and preset imports no SymPy; a graph's builder (``blocks/``) is imported on the
first build.

:data:`MODULES` is the one table: each family module and the families it declares, one line per
module, in the order :func:`families` lists them. A family is registered by being named here, so a
new family is one new file and one line; ``tests/test_lazy.py`` holds each line to its module.
``family("vit")`` imports ``symgpt.families.vit`` alone, ``find_preset("gpt2-small")`` the modules up
to the one declaring it; :func:`families`, :func:`presets` and :func:`readers` import every module
of the table (a missing or failing module raises).
"""

from __future__ import annotations

from types import ModuleType

from ..core.errors import SymgptError
from ..core.lazy import Ref
from . import base
from .base import Family, Preset  # noqa: F401
from .fields import Reader  # noqa: F401

#: each family module (imported on first use) and the families it declares, in listing order
MODULES: tuple[tuple[Ref, tuple[str, ...]], ...] = (
    (Ref("symgpt.families.gpt2"), ("gpt2",)),
    (Ref("symgpt.families.decoders"), ("decoder",)),
    (Ref("symgpt.families.llama"), ("llama",)),
    (Ref("symgpt.families.mistral"), ("mistral",)),
    (Ref("symgpt.families.mixtral"), ("mixtral",)),
    (Ref("symgpt.families.qwen2"), ("qwen2",)),
    (Ref("symgpt.families.gemma"), ("gemma",)),
    (Ref("symgpt.families.phi3"), ("phi3",)),
    (Ref("symgpt.families.falcon"), ("falcon",)),
    (Ref("symgpt.families.gpt_neox"), ("gpt_neox",)),
    (Ref("symgpt.families.opt"), ("opt",)),
    (Ref("symgpt.families.deepseek"), ("deepseek_v3", "deepseek_v2")),
    (Ref("symgpt.families.qwen3"), ("qwen3",)),
    (Ref("symgpt.families.qwen_moe"), ("qwen2_moe", "qwen3_moe")),
    (Ref("symgpt.families.gemma2"), ("gemma2", "gemma3_text")),
    (Ref("symgpt.families.phi"), ("phi",)),
    (Ref("symgpt.families.starcoder2"), ("starcoder2",)),
    (Ref("symgpt.families.olmo2"), ("olmo2",)),
    (Ref("symgpt.families.exaone"), ("exaone",)),
    (Ref("symgpt.families.internlm3"), ("internlm3",)),
    (Ref("symgpt.families.iquestcoder"), ("iquestcoder",)),
    (Ref("symgpt.families.cwm"), ("cwm",)),
    (Ref("symgpt.families.ernie4_5"), ("ernie4_5",)),
    (Ref("symgpt.families.granite"), ("granite",)),
    (Ref("symgpt.families.helium"), ("helium",)),
    (Ref("symgpt.families.ministral3"), ("ministral3",)),
    (Ref("symgpt.families.smollm3"), ("smollm3",)),
    (Ref("symgpt.families.vaultgemma"), ("vaultgemma",)),
    (Ref("symgpt.families.glm"), ("glm",)),
    (Ref("symgpt.families.seed_oss"), ("seed_oss",)),
    (Ref("symgpt.families.olmo3"), ("olmo3",)),
    (Ref("symgpt.families.hyperclovax"), ("hyperclovax",)),
    (Ref("symgpt.families.granitemoe"), ("granitemoe", "granitemoeshared")),
    (Ref("symgpt.families.sarvam_mla"), ("sarvam_mla",)),
    (Ref("symgpt.families.bert"), ("bert", "roberta", "distilbert", "camembert", "xlm-roberta", "data2vec-text",
                                   "ernie")),
    (Ref("symgpt.families.t5"), ("t5",)),
    (Ref("symgpt.families.bart"), ("bart",)),
    (Ref("symgpt.families.vit"), ("vit",)),
    (Ref("symgpt.families.transformer"), ("transformer",)),
    # --- dense decoders read from config.json: ALiBi, learned/sinusoidal positions, GPT-J, Cohere, ...
    (Ref("symgpt.families.bloom"), ("bloom", "mpt")),
    (Ref("symgpt.families.gptj"), ("gptj", "codegen")),
    (Ref("symgpt.families.gpt_neo"), ("gpt_neo", "gpt_bigcode", "openai_gpt")),
    (Ref("symgpt.families.cohere"), ("cohere", "cohere2")),
    (Ref("symgpt.families.stablelm"), ("stablelm", "glm4")),
    (Ref("symgpt.families.olmo"), ("olmo", "exaone4")),
    (Ref("symgpt.families.persimmon"), ("persimmon", "arcee", "jais2", "nanochat")),
    (Ref("symgpt.families.xglm"), ("xglm", "ctrl", "biogpt")),
    # attention variants: sinks, output gates, sparse-attention indexers
    (Ref("symgpt.families.gpt_oss"), ("gpt_oss",)),
    # --- mixture-of-experts decoders and multi-latent attention (the moe group) ---
    (Ref("symgpt.families.olmoe"), ("olmoe",)),
    (Ref("symgpt.families.minimax"), ("minimax_m2",)),
    (Ref("symgpt.families.mellum"), ("mellum",)),
    (Ref("symgpt.families.glm4_moe"), ("glm4_moe",)),
    (Ref("symgpt.families.kolibri"), ("kolibri1",)),
    (Ref("symgpt.families.phimoe"), ("phimoe",)),
    (Ref("symgpt.families.mla_models"), ("minicpm3", "youtu")),
    # ...ForCausalLM heads of encoder and encoder-decoder families
    (Ref("symgpt.families.seq2seq_decoder"), ("seq2seq_decoder",)),
    (Ref("symgpt.families.bert_causal"), ("electra", "megatron_bert", "xlm_roberta_xl", "roberta_prelayernorm",
                                         "bert_generation")),
    # decoders with designs of their own
    (Ref("symgpt.families.gpt_neox_japanese"), ("gpt_neox_japanese",)),
    # --- state-space layers ---
    (Ref("symgpt.families.mamba"), ("mamba", "mamba2")),
    # --- mixture-of-experts decoders, second group ---
    (Ref("symgpt.families.aria"), ("aria_text",)),
    (Ref("symgpt.families.cohere2_moe"), ("cohere2_moe",)),
    (Ref("symgpt.families.exaone_moe"), ("exaone_moe",)),
    (Ref("symgpt.families.hy_v3"), ("hy_v3",)),
    (Ref("symgpt.families.ernie4_5_moe"), ("ernie4_5_moe",)),
    (Ref("symgpt.families.minimax_m3"), ("minimax_m3_vl_text",)),
    # --- xIELU (Apertus), BitNet's sub-norms, MLA with a post-MLP norm, Llama 4 ---
    (Ref("symgpt.families.apertus"), ("apertus",)),
    (Ref("symgpt.families.bitnet"), ("bitnet",)),
    (Ref("symgpt.families.axk1"), ("axk1",)),
    (Ref("symgpt.families.llama4"), ("llama4_text",)),
    # Llama 4 with its vision encoder (2-D rotary ViT, pixel shuffle, adapter, projector)
    (Ref("symgpt.families.llama4_vlm"), ("llama4",)),
    # DeepSeek Sparse Attention (multi-latent attention with a lightning indexer)
    (Ref("symgpt.families.dsa"), ("deepseek_v32", "glm_moe_dsa", "axk2")),
    # --- differential attention, dynamic masks, mixtures of attention heads ---
    (Ref("symgpt.families.diffllama"), ("diffllama",)),
    (Ref("symgpt.families.doge"), ("doge",)),
    (Ref("symgpt.families.jetmoe"), ("jetmoe",)),
    (Ref("symgpt.families.cpmant"), ("cpmant",)),
    # --- gated attention outputs and attention sinks ---
    (Ref("symgpt.families.attention_moe"), ("afmoe", "laguna", "flint", "mimo_v2_flash", "beam")),
    (Ref("symgpt.families.granite_swa"), ("granite_swa", "granitemoe_swa")),
    # Gemma 4 (text): per-layer embeddings, KV sharing
    (Ref("symgpt.families.gemma4"), ("gemma4",)),
    # Fuyu: image patches as tokens through one linear layer
    (Ref("symgpt.families.fuyu"), ("fuyu",)),
    # MiniCPM-V 4.6/4.7 and MiniCPM-OCR: Qwen3.5 decoder, a tower and mergers held
    (Ref("symgpt.families.minicpmv"), ("minicpmv",)),
    # HyperCLOVA X Vision v2: a HyperCLOVA X decoder with Qwen2.5-VL's tower held
    (Ref("symgpt.families.hyperclovax_vision"), ("hyperclovax_vision",)),
    # encoders run as causal LMs with more parts: rotary, decoupled widths, extra embeddings, adapters
    (Ref("symgpt.families.encoder_causal"), ("roformer", "rembert", "roc_bert", "xmod", "big_bird",
                                            "xlm")),
    # --- hybrids of state-space and attention layers ---
    (Ref("symgpt.families.hybrid"), ("hybrid", "hybrid1")),
    # --- Gated DeltaNet hybrids (linear attention among gated attention) ---
    (Ref("symgpt.families.qwen3_next"), ("qwen3_next", "qwen3_5", "qwen3_5_moe", "olmo_hybrid", "lara_mini")),
    # --- layer kinds as stacks: short convolutions among attention layers, a bare first layer ---
    (Ref("symgpt.families.lfm"), ("lfm2", "lfm3")),
    (Ref("symgpt.families.modernbert_decoder"), ("modernbert_decoder",)),
    # --- vision--language models: a vision tower and projector beside the text decoder ---
    (Ref("symgpt.families.vlm"), ("gemma3", "llava", "paligemma", "llava_next", "vipllava", "llava_onevision")),
    # --- recurrent layers: RWKV, RG-LRU, xLSTM ---
    (Ref("symgpt.families.rwkv"), ("rwkv",)),
    (Ref("symgpt.families.recurrent_gemma"), ("recurrent_gemma",)),
    (Ref("symgpt.families.xlstm"), ("xlstm",)),
    # speech models: an audio encoder over log-mel frames and a text decoder
    (Ref("symgpt.families.whisper"), ("whisper",)),
    (Ref("symgpt.families.audio_lm"), ("qwen2_audio",)),
    # --- vision--language models with cross-attention layers (Llama 3.2 Vision) ---
    (Ref("symgpt.families.mllama"), ("mllama_text", "mllama")),
    (Ref("symgpt.families.qwen_vl"), ("qwen2_5_vl", "qwen2_vl")),
    # vision--language models with a pixel-shuffle connector or a Pixtral tower
    (Ref("symgpt.families.idefics3"), ("idefics3", "smolvlm", "idefics2", "aria")),
    (Ref("symgpt.families.pixtral"), ("mistral3", "lighton_ocr")),
    (Ref("symgpt.families.video_llava"), ("video_llava",)),
    (Ref("symgpt.families.cohere2_vision"), ("cohere2_vision",)),
    (Ref("symgpt.families.internvl"), ("internvl", "qianfan_ocr")),
    (Ref("symgpt.families.got_ocr2"), ("got_ocr2",)),
    (Ref("symgpt.families.deepseek_vl"), ("deepseek_vl", "deepseek_vl_hybrid")),
    (Ref("symgpt.families.lfm2_vl"), ("lfm2_vl",)),
    # --- vision--language models: a decoder of another family and a held vision tower (Qwen3-VL, GLM-4V) ---
    (Ref("symgpt.families.vlm_towers"), ("qwen3_vl", "qwen3_vl_moe", "qwen3_5_vl", "qwen3_5_moe_vl", "glm4v",
                                         "glm4v_moe", "glm_ocr", "exaone4_5", "qwen2_5_omni_thinker",
                                         "qwen3_omni_moe_thinker", "video_llama_3",
                                         "paddleocr_vl", "kimi_k25")),
    # --- more of them: Cosmos3 Edge (vlm_towers_more.py also reads Cosmos3 as qwen3_vl) ---
    (Ref("symgpt.families.vlm_towers_more"), ("cosmos3_edge",)),
    # --- linear-attention hybrids: lightning attention (MiniMax-Text-01), Kimi Delta Attention among MLA ---
    (Ref("symgpt.families.lightning"), ("minimax",)),
    (Ref("symgpt.families.kimi_linear"), ("kimi_linear", "bailing_hybrid")),
    # --- shared transformer blocks among Mamba layers (weights once, run at every use) ---
    (Ref("symgpt.families.zamba"), ("zamba", "zamba2")),
    # --- speech LMs and speech encoder--decoders beyond Whisper ---
    (Ref("symgpt.families.voxtral"), ("voxtral",)),
    (Ref("symgpt.families.pop2piano"), ("pop2piano",)),
    (Ref("symgpt.families.speech_to_text"), ("speech_to_text",)),
    (Ref("symgpt.families.moonshine"), ("moonshine",)),
    # --- image and speech models beyond those: Pix2Struct, ViT + BERT, BLIP-2, BLIP, Kosmos-2 ---
    (Ref("symgpt.families.pix2struct"), ("pix2struct",)),
    (Ref("symgpt.families.vision_encoder_decoder"), ("vision-encoder-decoder",)),
    (Ref("symgpt.families.blip2"), ("blip-2", "instructblip", "instructblipvideo")),
    (Ref("symgpt.families.blip"), ("blip",)),
    (Ref("symgpt.families.kosmos2"), ("kosmos-2",)),
    # --- vision--language models, second wave: LFM3-VL, Granite-Docling, GIT, Florence-2, UDOP ---
    (Ref("symgpt.families.lfm3_vl"), ("lfm3_vl",)),
    (Ref("symgpt.families.granite_docling"), ("granite_docling",)),
    (Ref("symgpt.families.git"), ("git",)),
    (Ref("symgpt.families.florence2"), ("florence2",)),
    (Ref("symgpt.families.udop"), ("udop",)),
    # --- speech models whose audio tower is held (parameters counted, audio input refused) ---
    (Ref("symgpt.families.qwen3_asr"), ("qwen3_asr",)),
    (Ref("symgpt.families.granite_speech"), ("granite_speech", "granite_speech_plus")),
    # --- speech encoder--decoders whose speech encoder is held (parameters counted, audio input refused) ---
    (Ref("symgpt.families.speecht5"), ("speecht5",)),
    (Ref("symgpt.families.canary"), ("canary", "cohere_asr")),
    (Ref("symgpt.families.speech_encoder_decoder"), ("speech-encoder-decoder",)),
    (Ref("symgpt.families.seamless_m4t"), ("seamless_m4t", "seamless_m4t_v2")),
    # --- speech models beyond those: Voxtral Realtime (a time-conditioned decoder, its audio tower held) ---
    (Ref("symgpt.families.voxtral_realtime"), ("voxtral_realtime",)),
    # --- VibeVoice: speech tokenizers (and a diffusion head) held beside a Qwen2 decoder ---
    (Ref("symgpt.families.vibevoice"), ("vibevoice_asr", "vibevoice")),
    # --- Kyutai speech-to-text: text and codebook tokens summed, the Mimi codec held ---
    (Ref("symgpt.families.kyutai"), ("kyutai_speech_to_text",)),
    # --- vision--language models beside a decoder of the generic builder, their other modules held ---
    (Ref("symgpt.families.vlm_held"), ("molmo2", "idefics", "evolla")),
    (Ref("symgpt.families.kosmos2_5"), ("kosmos-2.5",)),
    (Ref("symgpt.families.pp_formulanet"), ("pp_formulanet",)),
    (Ref("symgpt.families.t5gemma2"), ("t5gemma2",)),
    # --- a decoder of another family with a held vision or audio tower: Ovis2, OmniASR, Fun-ASR-Nano, Nemotron Omni ---
    (Ref("symgpt.families.held_towers"), ("ovis2", "omniasr", "fun_asr_nano", "nemotron_h_omni")),
    (Ref("symgpt.families.janus"), ("janus",)),
    # --- more decoders of other families beside a held vision tower: MiniMax-M3-VL, Step3p7, ERNIE 4.5 VL,
    # Unlimited-OCR ---
    (Ref("symgpt.families.step3p5_text"), ("step3p5",)),
    (Ref("symgpt.families.unlimited_ocr_text"), ("unlimited_ocr_text",)),
    (Ref("symgpt.families.vlm_held_moe"), ("minimax_m3_vl", "step3p7", "ernie4_5_vl_moe",
                                        "unlimited_ocr")),
)

#: built-in family name -> its module's reference
_BY_NAME = {name: ref for ref, names in MODULES for name in names}
_USER_PRESETS: dict[str, Preset] = {}


def _module(ref: Ref, names: tuple[str, ...]) -> ModuleType:
    """The family module of one table line, checked to declare exactly the families it names."""
    module = ref.get()
    declared = tuple(f.name for f in module.FAMILIES)
    if declared != names:
        raise SymgptError(f"{ref.module} declares the families {declared}; the table of symgpt.families "
                          f"names {names}")
    return module


def _modules() -> list[ModuleType]:
    return [_module(ref, names) for ref, names in MODULES]


def family(name: str) -> Family:
    """The family *name* (its module imported if need be)."""
    if name in _BY_NAME:
        ref = _BY_NAME[name]
        names = next(n for r, n in MODULES if r is ref)
        return next(f for f in _module(ref, names).FAMILIES if f.name == name)
    found = base.registered().get(name)
    if found is None:
        import difflib

        known = sorted(families())
        close = difflib.get_close_matches(name, known, n=5)
        raise SymgptError(f"unknown family {name!r}; " + (f"did you mean {', '.join(close)}? " if close else "")
                          + f"{len(known)} families are built in (symgpt.families.families() lists them)")
    return found


def families() -> dict[str, Family]:
    """Every family: the built-in ones in table order, then those registered by the user."""
    return {**{f.name: f for m in _modules() for f in m.FAMILIES}, **base.registered()}


def register_family(fam: Family) -> Family:
    """Register your own family (a name a built-in family has already raises)."""
    if fam.name in _BY_NAME:
        raise SymgptError(f"family {fam.name!r} is registered twice")
    return base.register_family(fam)


def presets() -> dict[str, Preset]:
    """Every preset, name -> :class:`Preset`: the modules' ``PRESETS`` in table order, then your
    own (:func:`register_preset`). A name declared twice raises."""
    out: dict[str, Preset] = {}
    for m in _modules():
        for p in m.PRESETS:
            if p.name in out:
                raise SymgptError(f"preset {p.name!r} is declared twice ({m.__name__})")
            out[p.name] = p
    for p in _USER_PRESETS.values():
        if p.name in out:
            raise SymgptError(f"preset {p.name!r} is declared twice")
        out[p.name] = p
    return out


def find_preset(name: str) -> Preset | None:
    """The preset *name*, or None. The modules are searched in table order and the search stops at
    the first that declares it, so ``symgpt params gpt2-small`` imports one family module
    (:func:`presets` is the whole table, and refuses a name declared twice)."""
    for ref, names in MODULES:
        for p in _module(ref, names).PRESETS:
            if p.name == name:
                return p
    return _USER_PRESETS.get(name)


def register_preset(preset: Preset) -> Preset:
    """Add a preset of your own; a name taken already raises."""
    if preset.name in presets():
        raise SymgptError(f"preset {preset.name!r} is defined twice")
    _USER_PRESETS[preset.name] = preset
    return preset


def readers() -> dict[str, Reader]:
    """Every config.json reader, ``model_type`` -> :class:`Reader`, from the modules of the table.
    A model type read by two modules raises."""
    out: dict[str, Reader] = {}
    for m in _modules():
        for model_type, r in m.READERS.items():
            if model_type in out:
                raise SymgptError(f"model_type {model_type!r} has two readers ({m.__name__})")
            out[model_type] = r
    return out


def reader(model_type: str) -> Reader:
    """The reader of *model_type*; an unknown one raises, listing the known ones."""
    found = readers()
    if model_type not in found:
        raise SymgptError(f"unknown model_type {model_type[:60]!r}; supported: {', '.join(sorted(found))}")
    return found[model_type]
