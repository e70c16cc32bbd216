"""Run lines through the Spark per-line pipeline and the reference mapper, for comparisons."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import RdfFormat, Triple, parse
from pyspark.sql import functions as F

from changeprov.mapping.mapper import map_line
from changeprov.spark.decode import decode
from changeprov.spark.transform import map_events


def parse_nt(lines) -> set[Triple]:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    return {Triple(q.subject, q.predicate, q.object) for q in parse(data, format=RdfFormat.N_TRIPLES)}


def spark_outcomes(spark, lines: list[bytes], tmp_path: Path, *, families=None) -> list[tuple[str, set]]:
    """Per input line: ("blank" | reason | "ok:<family>", triples) from the Spark pipeline.

    ``families``: build only these family mappers (lines of other families come out unmapped).
    """
    path = tmp_path / "lines.jsonl"
    path.write_bytes(b"".join(raw + b"\n" for raw in lines))
    lines_df = spark.read.text(str(path)).withColumn("_n", F.monotonically_increasing_id())
    rows = (lines_df.transform(decode).transform(lambda df: map_events(df, families=families))
            .orderBy("_n").select("blank", "reason", "family", "triples").collect())
    out = []
    for r in rows:
        if r.blank:
            out.append(("blank", set()))
        elif r.reason:
            out.append((r.reason, set()))
        else:
            out.append((f"ok:{r.family}", parse_nt(r.triples)))
    return out


def reference_outcomes(lines: list[bytes]) -> list[tuple[str, set]]:
    out = []
    for raw in lines:
        r = map_line(raw)
        if r.blank:
            out.append(("blank", set()))
        elif r.quarantine:
            out.append((r.quarantine.reason, set()))
        else:
            out.append((f"ok:{r.family}", set(r.triples)))
    return out


def diff_report(lines, got, want) -> str:
    """Readable differences, line by line."""
    msgs = []
    for i, (raw, (g_out, g_t), (w_out, w_t)) in enumerate(zip(lines, got, want), start=1):
        if g_out != w_out:
            msgs.append(f"line {i}: spark {g_out}, reference {w_out}: {raw[:160]!r}")
        elif g_t != w_t:
            missing = sorted(str(t) for t in w_t - g_t)[:8]
            extra = sorted(str(t) for t in g_t - w_t)[:8]
            msgs.append(f"line {i} ({w_out}): missing {len(w_t - g_t)} / unexpected {len(g_t - w_t)}\n"
                        + "".join(f"   - {t}\n" for t in missing) + "".join(f"   + {t}\n" for t in extra))
    return "\n".join(msgs[:30])
