#!/usr/bin/env python3
"""Writes report.md and accuracy.png for a scripts/exercise10.sh run.

    exercise10_report.py RUN_DIR BUDGET_SECONDS TARGET_ACCURACY EPOCHS

Reads RUN_DIR/<mode>/summary.json and metrics.jsonl of every mode; a mode whose run failed is
listed as failed. The answers are sentences built from the measured numbers.
"""
import json
import os
import subprocess
import sys

MODES = [
    ("single", "single process, 1 worker thread"),
    ("async", "async, 2 shards x 2 workers"),
    ("sync", "sync, 2 shards x 2 workers (average 2 of 2)"),
    ("sync-backup", "sync, 2 shards x 3 workers (average 2 of 3: 1 backup)"),
    ("in-graph", "in-graph sync, 2 shards x 2 workers (the chief splits each global batch of 2 x batch-size)"),
    ("ssp", "ssp, 2 shards x 2 workers, staleness 2"),
    ("model-parallel", "model-parallel, 2 shards, 1 replica in 2 vertical slices"),
]
SAME = 0.003  # accuracy differences below this are "about the same"


def load(run_dir, mode):
    path = os.path.join(run_dir, mode)
    try:
        with open(os.path.join(path, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(path, "metrics.jsonl")) as f:
            rows = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError):
        return None
    return {"summary": summary, "rows": rows}


def time_to(rows, target):
    for r in rows:
        if r.get("validation_accuracy", 0) >= target:
            return r["wall_seconds"]
    return None


def fmt_time(t):
    return "not reached" if t is None else f"{t:.1f}"


def pct(x):
    return f"{100 * x:.2f}%"


def compare_accuracy(a, b, name_a, name_b):
    d = a - b
    if abs(d) < SAME:
        return f"{name_a} ended about as accurate as {name_b} ({pct(a)} vs {pct(b)} test accuracy)"
    better = "better" if d > 0 else "worse"
    return f"{name_a} ended {better} than {name_b}: {pct(a)} vs {pct(b)} test accuracy ({100 * d:+.2f} points)"


def compare_speed(ta, tb, name_a, name_b, target):
    if ta is None and tb is None:
        return f"neither {name_a} nor {name_b} reached {pct(target)} validation accuracy"
    if ta is None:
        return f"{name_a} never reached {pct(target)} validation accuracy, {name_b} did after {tb:.1f} s"
    if tb is None:
        return f"{name_a} reached {pct(target)} validation accuracy after {ta:.1f} s; {name_b} never did"
    faster = "faster" if ta < tb else "slower"
    ratio = f", {ta / tb:.2f}x the time" if tb > 0 else ""
    return (f"{name_a} reached {pct(target)} validation accuracy {faster} than {name_b} "
            f"({ta:.1f} s vs {tb:.1f} s{ratio})")


def main():
    run_dir, budget, target, epochs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    # notebook EVAL_EVERY_EPOCHS PATIENCE MAX_EPOCHS: the notebook's early stopping, no time budget
    notebook = sys.argv[6:9] if len(sys.argv) > 5 and sys.argv[5] == "notebook" else None
    runs = {mode: load(run_dir, mode) for mode, _ in MODES}
    if notebook:
        how = (f"Every mode trained the same model on the same data as the exercise-10 notebook did: no "
               f"time budget, an evaluation every {notebook[0]} epochs (`train.eval-every-epochs`), early "
               f"stopping after {notebook[1]} evaluations without a lower validation loss "
               f"(`train.patience`, `train.early-stopping-metric = validation-loss`), at most {notebook[2]} "
               f"epochs, and the model with the lowest validation loss kept (*best-val model*, the "
               f"notebook's restored model)")
        within = "before early stopping"
    else:
        how = (f"Every mode trained the same model on the same data for {budget:.0f} s of wall-clock time "
               f"(`train.max-seconds`), evaluating every 500 steps")
        within = f"in {budget:.0f} s"
    lines = [f"# Exercise 10: async, sync and model-parallel training",
             "",
             f"{how}; *time to target* is the training time "
             f"at the first evaluation with validation accuracy >= {pct(target)}. Test accuracy is the "
             f"final model's; *best-val model* is the test accuracy of the model with the lowest "
             f"validation loss. Every cluster node is its own process on this machine.",
             "",
             "| mode | setup | time to target (s) | best validation | final test | best-val model test | examples/s | steps | epochs | stale dropped |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    facts = {}
    for mode, setup in MODES:
        run = runs[mode]
        if run is None:
            skipped = os.path.join(run_dir, mode, "skipped")
            why = f"skipped: {open(skipped).read().strip()}" if os.path.exists(skipped) else "failed"
            lines.append(f"| {mode} | {setup} | {why} | | | | | | | |")
            continue
        s, rows = run["summary"], run["rows"]
        t = time_to(rows, target)
        facts[mode] = {"t": t, "test": s["final_test_accuracy"], "best": s["test_accuracy"],
                       "val": s["best_validation_accuracy"], "eps": s["examples_per_second"],
                       "epochs": s["epochs"]}
        lines.append(f"| {mode} | {setup} | {fmt_time(t)} | {pct(s['best_validation_accuracy'])} | "
                     f"{pct(s['final_test_accuracy'])} | {pct(s['test_accuracy'])} | "
                     f"{s['examples_per_second']:.0f} | {s['steps']} | {s['epochs']:.1f} | {s.get('stale_dropped', 0)} |")
    if notebook:
        lines += ["", "Why each run stopped: " + "; ".join(
            f"{mode} after {runs[mode]['summary']['epochs']:.1f} epochs ({runs[mode]['summary']['stop_reason']})"
            for mode, _ in MODES if runs[mode] is not None) + "."]
    model = next((r["summary"] for r in runs.values() if r is not None), None)
    if model is not None and "layers" in model:
        lines += ["", f"Model: preset `{model.get('preset', '?')}`, input {model.get('input', '?')}, layers "
                      + ", ".join(f"`{l}`" for l in model["layers"])
                      + f" ({model.get('parameters', '?')} parameters); optimizer {model.get('optimizer', '?')}, "
                      f"learning rate {model.get('learning_rate', '?')}, batch {model.get('batch_size', '?')}."]
    lines += ["", "![test accuracy against training time](accuracy.png)", "", "## Answers", ""]

    def have(*modes):
        return all(m in facts for m in modes)

    if have("async", "single"):
        a, b = facts["async"], facts["single"]
        lines.append(f"- **How long does asynchronous training take?** "
                     + (f"Async reached {pct(target)} validation accuracy after {a['t']:.1f} s"
                        if a["t"] is not None else f"Async did not reach {pct(target)} {within}")
                     + f" and ended at {pct(a['test'])} test accuracy, at {a['eps']:.0f} examples/s; "
                     + compare_speed(a["t"], b["t"], "async", "the single process", target) + ".")
    if have("sync", "async"):
        a, b = facts["sync"], facts["async"]
        lines.append(f"- **Do synchronous updates give a better model?** "
                     + compare_accuracy(a["test"], b["test"], "Sync", "async") + ". **Faster?** "
                     + compare_speed(a["t"], b["t"], "sync", "async", target)
                     + f"; sync trained {a['eps']:.0f} vs {b['eps']:.0f} examples/s.")
    if have("sync-backup", "sync"):
        a, b = facts["sync-backup"], facts["sync"]
        lines.append(f"- **A backup worker:** " + compare_speed(a["t"], b["t"], "sync with a backup", "plain sync", target)
                     + "; " + compare_accuracy(a["test"], b["test"], "it", "plain sync") + ".")
    if have("in-graph", "sync"):
        a, b = facts["in-graph"], facts["sync"]
        lines.append(f"- **In-graph against between-graph sync:** " + compare_speed(a["t"], b["t"], "in-graph", "between-graph sync", target)
                     + f"; in-graph trained {a['eps']:.0f} vs {b['eps']:.0f} examples/s; "
                     + compare_accuracy(a["test"], b["test"], "in-graph", "between-graph sync") + ".")
    if have("ssp", "async"):
        a, b = facts["ssp"], facts["async"]
        lines.append(f"- **Bounded staleness:** " + compare_speed(a["t"], b["t"], "ssp", "async", target)
                     + "; " + compare_accuracy(a["test"], b["test"], "ssp", "async") + ".")
    if have("model-parallel", "async", "single"):
        a, b, c = facts["model-parallel"], facts["async"], facts["single"]
        lines.append(f"- **Does a vertical split across devices train faster?** Model-parallel trained "
                     f"{a['eps']:.0f} examples/s: {a['eps'] / c['eps']:.2f}x the single process and "
                     f"{a['eps'] / b['eps']:.2f}x async; "
                     + compare_speed(a["t"], c["t"], "it", "the single process", target) + ". **Different?** "
                     + compare_accuracy(a["test"], c["test"], "It", "the single process")
                     + f", after {a['epochs']:.1f} epochs against {c['epochs']:.1f}: one replica "
                       "has no stale gradients, so per step it computes what the unsplit model computes, up "
                       "to rounding; what differs is how many steps it took"
                       + (" before early stopping." if notebook else " in the budget."))
    lines += ["", f"## Accuracy after {epochs} epochs with 1, 2 and 3 async workers", "",
              "| workers | epochs | final test | best validation | wall s | examples/s |", "|---|---|---|---|---|---|"]
    done = [load(run_dir, f"epochs-{w}") for w in (1, 2, 3)]
    for w, run in zip((1, 2, 3), done):
        if run is None:
            lines.append(f"| {w} | failed | | | | |")
            continue
        s = run["summary"]
        lines.append(f"| {w} | {s['epochs']:.2f} | {pct(s['final_test_accuracy'])} | "
                     f"{pct(s['best_validation_accuracy'])} | {s['wall_seconds']:.1f} | {s['examples_per_second']:.0f} |")
    if all(done):
        first, last = done[0]["summary"], done[2]["summary"]
        lines += ["", f"With 3 workers instead of 1 the {epochs} epochs took {last['wall_seconds']:.1f} s instead of "
                  f"{first['wall_seconds']:.1f} s and ended at {pct(last['final_test_accuracy'])} instead of "
                  f"{pct(first['final_test_accuracy'])} test accuracy "
                  f"({100 * (last['final_test_accuracy'] - first['final_test_accuracy']):+.2f} points)"
                  + (": more asynchronous workers see the same examples sooner, with staler parameters."
                     if last['final_test_accuracy'] < first['final_test_accuracy'] - SAME
                     else ": more workers cost no accuracy here.")]
    with open(os.path.join(run_dir, "report.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    plot(run_dir, runs)


def plot(run_dir, runs):
    data_dir = os.path.join(run_dir, "plot")
    os.makedirs(data_dir, exist_ok=True)
    series = []
    for mode, _ in MODES:
        if runs[mode] is None:
            continue
        path = os.path.join(data_dir, f"{mode}.dat")
        with open(path, "w") as f:
            for r in runs[mode]["rows"]:
                f.write(f"{r['wall_seconds']} {r['test_accuracy']}\n")
        series.append(f"'{path}' using 1:2 with linespoints title '{mode}'")
    if not series:
        return
    terminals = subprocess.run(["gnuplot", "-e", "set terminal"], capture_output=True, text=True)
    terminal = "pngcairo size 900,560" if "pngcairo" in terminals.stdout + terminals.stderr else "png size 900,560"
    script = "\n".join([
        f"set terminal {terminal}",
        f"set output '{os.path.join(run_dir, 'accuracy.png')}'",
        "set title 'Test accuracy against training time'",
        "set xlabel 'training time (s)'", "set ylabel 'test accuracy'",
        "set key bottom right", "set grid",
        "plot " + ", ".join(series), ""])
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


if __name__ == "__main__":
    main()
