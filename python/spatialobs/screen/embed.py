"""Text embedders for the dense half of the state index.

An embedder is any object with ``name: str`` (recorded in saved indexes),
``dim: int`` and ``embed(texts) -> (n, dim) float32`` whose rows have unit
length (or are zero). :class:`HashedNgramEmbedder` is the default: no model, no
download, the same vectors everywhere. :class:`SentenceTransformerEmbedder`
wraps a sentence-transformers model the user installed; that package is only
imported when one is created.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Protocol, Sequence, runtime_checkable

import numpy as np
import numpy.typing as npt

from spatialobs import _core
from spatialobs._errors import InvalidInputError

__all__ = ["Embedder", "HashedNgramEmbedder", "SentenceTransformerEmbedder", "embedder_from_spec"]


@runtime_checkable
class Embedder(Protocol):
    """What :class:`~spatialobs.screen.StateIndex` needs from an embedder."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]: ...


class HashedNgramEmbedder:
    """Hashed character n-grams, L2-normalized (the hashing trick; computed in C++).

    The text is padded with one space on each side and cut into windows of ``n``
    code points; each window's FNV-1a 64 hash of its UTF-8 bytes picks bucket
    ``h % dim`` and a sign (``+1`` when bit 63 is clear). The bucket sums are
    divided by their norm; an empty text is the zero vector.

    Examples
    --------
    >>> e = HashedNgramEmbedder(dim=64)
    >>> v = e.embed(["sign in", "sign in"])
    >>> v.shape, bool(abs(float(v[0] @ v[1]) - 1.0) < 1e-6)
    ((2, 64), True)
    """

    def __init__(self, n: int = 3, dim: int = 256) -> None:
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 16:
            raise InvalidInputError(f"n must be an integer in 1..16, got {n!r}")
        if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 65536:
            raise InvalidInputError(f"dim must be an integer in 1..65536, got {dim!r}")
        self.n = n
        self.dim = dim
        self.name = f"hashed-ngram:n={n}:dim={dim}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        texts = list(texts)
        for i, t in enumerate(texts):
            if not isinstance(t, str):
                raise InvalidInputError(f"text {i} must be a string, got {type(t).__name__}")
        safe = [t if _encodable(t) else t.encode("utf-8", "replace").decode("utf-8") for t in texts]
        return _core.ngram_embed(safe, self.n, self.dim)

    def spec(self) -> Dict[str, Any]:
        return {"kind": "hashed-ngram", "n": self.n, "dim": self.dim}

    def __repr__(self) -> str:
        return f"HashedNgramEmbedder(n={self.n}, dim={self.dim})"


def _encodable(t: str) -> bool:
    try:
        t.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


class SentenceTransformerEmbedder:
    """A sentence-transformers model as the dense embedder (optional extra).

    ``sentence_transformers`` is imported here, not at package import; the model is
    loaded the way that package loads it (from a local path or its cache). Vectors
    are L2-normalized so that inner product is cosine similarity.

    Parameters
    ----------
    model : str or a loaded ``SentenceTransformer``
    batch_size : int, default 64
    """

    def __init__(self, model: Any, batch_size: int = 64, **kwargs: Any) -> None:
        if isinstance(model, str):
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise InvalidInputError(
                    "SentenceTransformerEmbedder needs the sentence-transformers package; "
                    "install it, or use the default HashedNgramEmbedder"
                ) from None
            self.model = SentenceTransformer(model, **kwargs)
            model_name = model
        else:
            self.model = model
            model_name = getattr(model, "model_name", None) or type(model).__name__
        dim = self.model.get_sentence_embedding_dimension()
        if not isinstance(dim, int) or dim < 1:
            raise InvalidInputError(f"the model reports no embedding dimension (got {dim!r})")
        self.dim = dim
        self.batch_size = batch_size
        self.name = f"sentence-transformers:{model_name}:dim={dim}"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        vecs = self.model.encode(list(texts), batch_size=self.batch_size, convert_to_numpy=True)
        vecs = np.ascontiguousarray(vecs, dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        np.divide(vecs, norms, out=vecs, where=norms > 0)
        return vecs

    def spec(self) -> Dict[str, Any]:
        return {"kind": "external", "name": self.name, "dim": self.dim}


def embedder_from_spec(spec: Dict[str, Any], given: Optional[Any] = None) -> Any:
    """Rebuild the embedder recorded in a saved index, or check the one the caller passes."""
    if given is not None:
        if getattr(given, "dim", None) != spec.get("dim"):
            raise InvalidInputError(
                f"the index was built with a {spec.get('dim')}-dimensional embedder, got dim={getattr(given, 'dim', None)}"
            )
        return given
    if spec.get("kind") == "hashed-ngram":
        return HashedNgramEmbedder(n=int(spec["n"]), dim=int(spec["dim"]))
    raise InvalidInputError(
        f"the index was built with embedder {spec.get('name')!r}; pass an equivalent one as "
        "StateIndex.load(path, embedder=...)"
    )
