"""Vision-tower ops whose saved tensors follow transformers' PyTorch code (measured against
``torch.autograd.graph.saved_tensors_hooks`` in tests/test_activations_vlm.py):

- :class:`LookupPositions`: CLIP's and SigLIP's learned positions, an ``nn.Embedding`` looked up
  with the ``position_ids`` buffer (``CLIPVisionEmbeddings``, ``SiglipVisionEmbeddings``): the
  lookup keeps the (1, num) int64 ids for the table's gradient;
- :class:`ScatterImageTokens`: ``inputs_embeds.masked_scatter(special_image_mask, features)``
  (``LlavaModel``, ``Gemma3Model``, ``PaliGemmaModel``, ``Idefics3Model.inputs_merger``): the scatter keeps its (B, T, 1) bool mask
  (expanded to (B, T, d), a view), once the model runs its images;
- :class:`ImageRMSNorm`: Gemma 3's projector norm (``Gemma3RMSNorm``), whose 1 + w is computed
  afresh and kept by the product only when the model runs its images;
- :class:`SequenceFirst`: ``nn.MultiheadAttention`` with ``batch_first`` transposes its key and
  value to (n, B, d) and projects them with one linear, whose input is that transposed tensor
  reshaped: a copy (SigLIP's attention-pooling head, ``SiglipMultiheadAttentionPoolingHead``).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from .base import Saved, register
from .norm import RMSNorm
from .vision import AddPositions, MergeImageTokens
from .views import FreeView


@register
@dataclass(frozen=True)
class LookupPositions(AddPositions):
    """A learned (num, dim) position table looked up with ids 0..num-1 and added (B, num, dim);
    the lookup keeps the (1, num) int64 ids when the table is trained and the tower runs: the ids'
    first dimension is min(1, ``runs``) (``runs`` = N_img: 0 without images, 1 with).
    ``per_image``: the ids are computed for each image (``Idefics3VisionEmbeddings`` buckets each
    image's patch coordinates): (B·N_img, num) ids kept."""

    runs: sympy.Expr = sympy.Integer(1)
    per_image: bool = False
    kind = "lookup_positions"
    title = "Add positions (looked up)"

    def saved(self, inputs, out, ctx):
        (x,) = inputs
        rows = x[0] if self.per_image else sympy.Min(1, self.runs)
        return (Saved("positions", (rows, self.num), "int64"),) if ctx.trainable else ()


@register
@dataclass(frozen=True)
class ScatterImageTokens(MergeImageTokens):
    """:class:`MergeImageTokens` as ``masked_scatter``: the (B, T, 1) bool mask is kept for the
    backward (the embeddings' gradient is masked with it, the features' gradient selected by it).
    It runs only when the model has images: the mask's last dimension is min(1, ``runs``)
    (``runs`` = N_img: 0 without images, 1 with)."""

    runs: sympy.Expr = sympy.Integer(1)

    kind = "scatter_image_tokens"
    title = "Merge image tokens (masked scatter)"

    def saved(self, inputs, out, ctx):
        x, _feats = inputs
        return (Saved("image_mask", (*x[:-1], sympy.Min(1, self.runs)), "bool"),)

    def describe(self):
        return "Merge image tokens (masked scatter)"


@register
@dataclass(frozen=True)
class SequenceFirst(FreeView):
    """(B, n, d) -> (B, n, d) in sequence-first layout: a transposed copy, a storage of its own that
    the linear after it keeps (no arithmetic)."""

    kind = "sequence_first"
    title = "Sequence-first copy"

    def shape(self, inputs):
        (x,) = inputs
        return tuple(x)

    def describe(self):
        return "Sequence-first copy"


@register
@dataclass(frozen=True)
class ImageRMSNorm(RMSNorm):
    """:class:`RMSNorm` over image features (B·N_img, t, dim): the same rule, its 1 + w (hf-eager,
    ``offset``) kept only when the norm runs: min(1, ``runs``) times (``runs`` = N_img)."""

    runs: sympy.Expr = sympy.Integer(1)

    kind = "image_rmsnorm"
    title = "RMSNorm (image features)"

    def saved(self, inputs, out, ctx):
        return tuple(Saved(s.role, (sympy.Min(1, self.runs), self.dim), s.dtype) if s.role == "one_plus_weight" else s
                     for s in super().saved(inputs, out, ctx))
