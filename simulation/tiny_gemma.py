"""A tiny Gemma-3-architecture model folder for smoke tests, CI and benchmarks.

vLLM loads it like any Hugging Face checkpoint folder; with
`load_format="dummy"` it needs no weights at all (vLLM fills random ones),
so the whole vLLM path (engine, chat template, tokenizer, guided decoding,
prefix caching, server) runs on a CPU in seconds. The folder has:

- config.json: `Gemma3ForCausalLM` (model_type `gemma3_text`) with tiny
  dimensions, in the same shape as the published Gemma-3 configs;
- tokenizer.json: a byte-level BPE tokenizer trained with `tokenizers` on
  the bundled Wikipedia sample, with Gemma's special tokens at Gemma's ids
  (<pad> 0, <eos> 1, <bos> 2, <unk> 3) plus the turn markers;
- tokenizer_config.json with a Gemma-style chat template (no system role:
  system text is folded into the first user turn, as Gemma's own template does);
- generation_config.json.

Random weights produce random text; only guided decoding makes their answers
well-formed, which is exactly what the tests need to exercise.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

SPECIAL_TOKENS: tuple[str, ...] = ("<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>")
END_OF_TURN_ID = SPECIAL_TOKENS.index("<end_of_turn>")

# Our own wording of Gemma's turn format: <start_of_turn>user|model ... <end_of_turn>.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set system_prefix = messages[0]['content'] | trim ~ '\n\n' -%}"
    "{%- set turns = messages[1:] -%}"
    "{%- else -%}"
    "{%- set system_prefix = '' -%}"
    "{%- set turns = messages -%}"
    "{%- endif -%}"
    "{%- for message in turns -%}"
    "{%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}"
    "{{ raise_exception('turns must alternate user/assistant after an optional system message') }}"
    "{%- endif -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' ~ role ~ '\n' }}"
    "{%- if loop.first -%}{{ system_prefix }}{%- endif -%}"
    "{{ message['content'] | trim }}{{ '<end_of_turn>\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}"
)

DEFAULT_VOCAB_SIZE = 4096

# The text model of google/gemma-3-4b-it as published (its config.json's
# text_config): with these dimensions and load_format="dummy", vLLM does the
# work of the real 4B model (random weights, nothing downloaded). The
# embedding keeps the published 262,208 rows although our tokenizer uses the
# first 4,096: the LM head's cost is that of the real model.
GEMMA3_4B_DIMS: dict = {
    "hidden_size": 2560,
    "intermediate_size": 10240,
    "num_hidden_layers": 34,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "query_pre_attn_scalar": 256,
    "sliding_window": 1024,
    "sliding_window_pattern": 6,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "vocab_size": 262208,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
}


def corpus_texts(limit: int = 400) -> list[str]:
    """Article texts from the bundled Wikipedia sample (engine/data/wiki_sample.json)."""
    path = Path(__file__).resolve().parent.parent / "engine" / "data" / "wiki_sample.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: bundled corpus missing; expected the package data file wiki_sample.json")
    articles = json.loads(path.read_text(encoding="utf-8"))
    return [a["text"] for a in articles[:limit]]


def _train_tokenizer(vocab_size: int, texts: list[str]):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    for token_id, token in enumerate(SPECIAL_TOKENS):
        if tokenizer.token_to_id(token) != token_id:
            raise RuntimeError(f"special token {token!r} got id {tokenizer.token_to_id(token)}, expected {token_id}")
    return tokenizer


def model_config(vocab_size: int, *, hidden_size: int = 128, num_layers: int = 2, max_position_embeddings: int = 4096) -> dict:
    """config.json for a tiny Gemma3ForCausalLM (shape of the published Gemma-3 text configs)."""
    head_dim = 64
    return {
        "architectures": ["Gemma3ForCausalLM"],
        "model_type": "gemma3_text",
        "attention_bias": False,
        "attention_dropout": 0.0,
        "attn_logit_softcapping": None,
        "final_logit_softcapping": None,
        "bos_token_id": 2,
        "eos_token_id": [1, END_OF_TURN_ID],
        "pad_token_id": 0,
        "head_dim": head_dim,
        "hidden_activation": "gelu_pytorch_tanh",
        "hidden_size": hidden_size,
        "initializer_range": 0.02,
        "intermediate_size": hidden_size * 4,
        "max_position_embeddings": max_position_embeddings,
        "num_attention_heads": 2,
        "num_hidden_layers": num_layers,
        "num_key_value_heads": 1,
        "query_pre_attn_scalar": head_dim,
        "rms_norm_eps": 1e-06,
        "rope_local_base_freq": 10000.0,
        "rope_scaling": None,
        "rope_theta": 1000000.0,
        "sliding_window": 1024,  # as Gemma-3-4B; a shared rubric prefix fits in the window
        "sliding_window_pattern": 2,
        "tie_word_embeddings": True,
        "torch_dtype": "float32",
        "use_cache": True,
        "vocab_size": vocab_size,
    }


def build_tiny_gemma(
    folder: str | os.PathLike[str],
    *,
    vocab_size: int = DEFAULT_VOCAB_SIZE,
    hidden_size: int = 128,
    num_layers: int = 2,
    max_position_embeddings: int = 4096,
    corpus_limit: int = 400,
    dims: dict | None = None,
) -> Path:
    """Write a tiny Gemma-3 model folder (no weights: load it with load_format="dummy").

    `dims` replaces entries of config.json (GEMMA3_4B_DIMS: a model of the
    published 4B shape with this tokenizer). Idempotent: an existing
    complete folder built with the same settings is reused.
    """
    folder = Path(folder)
    stamp = {
        "vocab_size": vocab_size,
        "hidden_size": hidden_size,
        "num_layers": num_layers,
        "max_position_embeddings": max_position_embeddings,
        "corpus_limit": corpus_limit,
        "chat_template": CHAT_TEMPLATE,
        **({"dims": dims} if dims else {}),
    }
    stamp_path = folder / "needlejudge_tiny_gemma.json"
    if stamp_path.exists() and json.loads(stamp_path.read_text()) == stamp:
        return folder
    folder.mkdir(parents=True, exist_ok=True)

    tokenizer = _train_tokenizer(vocab_size, corpus_texts(corpus_limit))
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<bos>",
                "eos_token": "<eos>",
                "pad_token": "<pad>",
                "unk_token": "<unk>",
                "additional_special_tokens": ["<start_of_turn>", "<end_of_turn>"],
                "add_bos_token": False,  # the chat template writes <bos>
                "add_eos_token": False,
                "clean_up_tokenization_spaces": False,
                "model_max_length": max_position_embeddings,
                "chat_template": CHAT_TEMPLATE,
            },
            indent=2,
        )
    )
    (folder / "special_tokens_map.json").write_text(
        json.dumps({"bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>"}, indent=2)
    )
    (folder / "config.json").write_text(
        json.dumps(
            {
                **model_config(
                    tokenizer.get_vocab_size(),
                    hidden_size=hidden_size,
                    num_layers=num_layers,
                    max_position_embeddings=max_position_embeddings,
                ),
                **(dims or {}),
            },
            indent=2,
        )
    )
    (folder / "generation_config.json").write_text(
        json.dumps({"bos_token_id": 2, "eos_token_id": [1, END_OF_TURN_ID], "pad_token_id": 0, "do_sample": False}, indent=2)
    )
    stamp_path.write_text(json.dumps(stamp))
    return folder
