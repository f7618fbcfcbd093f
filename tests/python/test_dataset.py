"""Dataset runs: streaming feeds from files and folders, --shard with 'parity data merge', the
summary's statistics against NumPy, and parity.distributed on a local Dask cluster of two
workers (one killed during the run) against the same run in one process."""
import functools
import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import parity
import parity.json
from parity.backend.onnx import OnnxFromPath
from parity.backend.onnxrt import OnnxrtRunner, SessionFromOnnx
from parity.backend.pluginref import PluginRefRunner
from parity.comparator import CompareFunc, DataLoader
from parity.dataset import FileFeeds, compare_results, run_dataset

from conftest import PARITY_CLI, save_model, tensor

WIDTH = 16


def matmul_tanh_model(path, width=WIDTH, layers=1):
    """x (1 x width) -> (MatMul W_k -> Tanh) x layers -> y: ORT and the reference round
    differently in the last bits, so errors are small, non-zero and differ per feed."""
    rng = np.random.RandomState(0)
    nodes, inits, prev = [], [], "x"
    for k in range(layers):
        w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
        inits.append(numpy_helper.from_array(w, f"W{k}"))
        out = "y" if k == layers - 1 else f"h{k}"
        nodes += [helper.make_node("MatMul", [prev, f"W{k}"], [f"m{k}"]),
                  helper.make_node("Tanh", [f"m{k}"], [out])]
        prev = out
    return save_model(path, nodes, [tensor("x", TensorProto.FLOAT, [1, width])],
                      [tensor("y", TensorProto.FLOAT, [1, width])], initializers=inits)


def feeds(count, bad=None, seed=3):
    rng = np.random.RandomState(seed)
    out = []
    for i in range(count):
        shape = (1, WIDTH + 1) if i == bad else (1, WIDTH)  # no reshape fits a bad feed
        out.append({"x": (rng.standard_normal(shape) * 3).astype(np.float32)})
    return out


def cli(*args):
    env = dict(os.environ)
    return subprocess.run([PARITY_CLI, *map(str, args)], capture_output=True, text=True, env=env)


def summary_text(output):
    """The dataset summary of a run's output, with the time in runner names masked."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "Dataset Summary" in line)
    end = next(i for i, line in enumerate(lines) if " | Command: " in line and i > start)
    text = "\n".join(line for line in lines[start:end] if "Writing the report to" not in line)
    return re.sub(r"-N(\d+)-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d", r"-N\1-TIME", text)


def masked_json(path):
    text = open(path).read()
    text = re.sub(r'"runtime": [^,\n]+', '"runtime": T', text)
    return re.sub(r"-N(\d+)-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d", r"-N\1-TIME", text)


def write_dataset(folder, all_feeds):
    """The feeds as files of every kind a dataset may hold: .npz (one feed), .npy (one feed of
    a single-input model) and a JSON list of several feeds, named in dataset order."""
    folder.mkdir()
    i = 0
    n = 0
    while i < len(all_feeds):
        if n % 3 == 0:
            np.savez(folder / f"{n:04d}.npz", **all_feeds[i])
            i += 1
        elif n % 3 == 1:
            np.save(folder / f"{n:04d}.npy", all_feeds[i]["x"])
            i += 1
        else:
            chunk = all_feeds[i:i + 4]
            parity.json.save_json(chunk, str(folder / f"{n:04d}.json"))
            i += len(chunk)
        n += 1


def test_sharded_runs_merged_equal_the_unsharded_run(tmp_path):
    model = matmul_tanh_model(tmp_path / "model.onnx")
    data = tmp_path / "data"
    all_feeds = feeds(60, bad=23)
    write_dataset(data, all_feeds)
    whole = tmp_path / "whole.json"
    report = tmp_path / "whole.html"
    run = cli("run", model, "--pluginref", "--onnxrt", "--dataset", "--load-inputs", data,
              "--atol", "1e-7", "--rtol", "1e-7", "--save-outputs", whole, "--report", report)
    assert run.returncode == 1, run.stdout + run.stderr  # feed 23 cannot run
    assert "Feed 23 failed to run on" in run.stdout

    shards = []
    for k in range(3):
        path = tmp_path / f"s{k}.json"
        r = cli("run", model, "--pluginref", "--onnxrt", "--shard", f"{k}/3", "--load-inputs",
                data, "--atol", "1e-7", "--rtol", "1e-7", "--save-outputs", path)
        assert r.returncode in (0, 1), r.stdout + r.stderr
        shards.append(path)
        iterations = json.load(open(path))["lst"][0][1]
        assert [it["parity_dataset_index"] for it in iterations] == list(range(k, 60, 3))
    merged = tmp_path / "all.json"
    r = cli("data", "merge", shards[2], shards[0], shards[1], "-o", merged)
    assert r.returncode == 0, r.stdout + r.stderr
    # The merged file is the one the unsharded run saved (runtimes and names' times aside).
    assert masked_json(merged) == masked_json(whole)

    merged_report = tmp_path / "merged.html"
    compared = cli("run", "--load-outputs", merged, "--atol", "1e-7", "--rtol", "1e-7",
                   "--report", merged_report)
    assert compared.returncode == 1
    assert summary_text(compared.stdout) == summary_text(run.stdout)
    assert "Feed 23 failed to run on" in summary_text(compared.stdout)

    def body(path):  # the report without the command line it shows
        return re.sub(r"<p><code>.*?</code></p>", "", open(path).read())

    assert re.sub(r"-N(\d+)-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d", "", body(merged_report)) == \
        re.sub(r"-N(\d+)-\d\d/\d\d/\d\d-\d\d:\d\d:\d\d", "", body(report))

    # Overlapping shards are refused, and the inputs stay untouched.
    before = open(shards[0]).read()
    r = cli("data", "merge", shards[0], shards[0], "-o", tmp_path / "twice.json")
    assert r.returncode == 1
    assert "must not overlap" in r.stdout + r.stderr
    assert open(shards[0]).read() == before


def test_summary_statistics_match_numpy(tmp_path):
    model = matmul_tanh_model(tmp_path / "model.onnx")
    saved = tmp_path / "out.json"
    loaded = OnnxFromPath(model)
    runners = [PluginRefRunner(loaded), OnnxrtRunner(SessionFromOnnx(loaded))]
    all_feeds = feeds(50)
    summary = run_dataset(runners, all_feeds, CompareFunc.simple(atol=1e-7, rtol=1e-7),
                          save_outputs_path=str(saved))
    assert len(summary.iterations) == 50
    results = parity.json.load_json(str(saved))
    a = [np.asarray(it["y"], dtype=np.float64) for it in results[0][1]]
    b = [np.asarray(it["y"], dtype=np.float64) for it in results[1][1]]
    absdiff = np.array([np.max(np.abs(x - y)) for x, y in zip(a, b)])
    # Polygraphy's elemwise check: an element fails when both its absolute and its relative
    # difference exceed their tolerances.
    passed = np.array([not np.any((np.abs(x - y) > 1e-7) & (np.abs(x - y) / np.abs(y) > 1e-7))
                       for x, y in zip(a, b)])
    [dist] = summary.error_distributions(0, 5)
    assert dist["compared"] == 50
    assert dist["passed"] == int(passed.sum()) == summary.passed_count()
    ordered = np.sort(absdiff)
    rank = lambda q: ordered[max(1, int(np.ceil(q * len(ordered)))) - 1]
    assert dist["abs"] == (ordered[0], rank(0.5), rank(0.9), rank(0.99), ordered[-1])
    worst = sorted(range(50), key=lambda i: (-absdiff[i], i))[:5]
    assert [i for i, _ in dist["worst"]] == worst
    assert dist["abs_mean"] == pytest.approx(absdiff.mean(), rel=1e-12)
    decades = np.zeros(12, dtype=int)
    for e in absdiff:
        k = 0 if e <= 0 else int(np.clip(np.floor(np.log10(e)) + 10, 0, 11))
        decades[k] += 1
    assert dist["decades"] == decades.tolist()
    # The saved results compare to the same records.
    again = compare_results(results, CompareFunc.simple(atol=1e-7, rtol=1e-7))
    assert again.iterations == summary.iterations


def test_file_feeds_read_lazily_in_order(tmp_path):
    all_feeds = feeds(13)
    write_dataset(tmp_path / "data", all_feeds)
    source = FileFeeds([str(tmp_path / "data")])
    source_meta = parity.comparator.TensorMetadata()
    source_meta.add("x", np.float32, [1, WIDTH])
    source.set_input_metadata(source_meta)
    got = []
    while (feed := source.get(len(got))) is not None:
        got.append(feed)
    assert len(got) == 13
    for x, y in zip(got, all_feeds):
        np.testing.assert_array_equal(x["x"], y["x"])
    np.testing.assert_array_equal(source.get(2)["x"], all_feeds[2]["x"])  # going back


def test_bad_shard_and_empty_folder_are_usage_errors(tmp_path):
    model = matmul_tanh_model(tmp_path / "model.onnx")
    r = cli("run", model, "--pluginref", "--shard", "3/3")
    assert r.returncode == 2
    assert "0 <= INDEX < COUNT" in r.stdout + r.stderr
    (tmp_path / "empty").mkdir()
    r = cli("run", model, "--pluginref", "--dataset", "--load-inputs", tmp_path / "empty")
    assert r.returncode == 1
    assert "holds no .json, .npz or .npy file" in r.stdout + r.stderr


# ----- Dask -----

def setup_runners(model_path):
    """Runs once in each worker process (given as a partial: picklable by reference)."""
    loaded = OnnxFromPath(model_path)
    # Named, so that every process names them alike (default names carry the time).
    return ([PluginRefRunner(loaded, threads=1, name="ref"),
             OnnxrtRunner(SessionFromOnnx(loaded), name="ort")],
            CompareFunc.simple(atol=1e-7, rtol=1e-7))


def test_dask_cluster_equals_one_process_with_a_killed_worker(tmp_path, capfd):
    import distributed

    setup = functools.partial(setup_runners, matmul_tanh_model(tmp_path / "model.onnx"))
    all_feeds = feeds(300, bad=137)

    runners, compare = setup()
    local = run_dataset(runners, all_feeds, compare)
    capfd.readouterr()
    local.log(worst=5)
    local_text = capfd.readouterr().out

    killed = []

    def kill_one_worker(client, done):
        # After a few batches, kill a worker that is running a batch: that batch (and the
        # others given to it) must run again elsewhere.
        if done < 3 or killed:
            return
        busy = {w: tasks for w, tasks in client.processing().items() if tasks}
        if not busy:
            return
        address = sorted(busy)[0]
        pid = client.run(os.getpid, workers=[address])[address]
        os.kill(pid, signal.SIGKILL)
        killed.append((address, list(busy[address])))

    from parity.distributed import local_cluster, run_dataset as run_distributed

    with local_cluster(n_workers=2) as cluster, distributed.Client(cluster) as client:
        assert all(w.startswith("tcp://127.0.0.1:") for w in client.scheduler_info()["workers"])
        remote = run_distributed(setup, all_feeds, client=client, batch_size=10,
                                 on_batch=kill_one_worker)
    assert killed and killed[0][1]  # a worker died with batches in progress
    capfd.readouterr()
    remote.log(worst=5)
    remote_text = capfd.readouterr().out

    assert len(remote.iterations) == 300
    assert [it.index for it in remote.iterations] == list(range(300))
    assert remote.iterations == local.iterations
    assert remote_text == local_text
    assert "Feed 137 failed to run on" in remote_text
    assert remote.iterations[137].errors and not remote.iterations[136].errors
    assert remote.error_distributions(0, 5) == local.error_distributions(0, 5)


def test_dask_generated_feeds_made_on_workers_equal_one_process(tmp_path):
    setup = functools.partial(setup_runners, matmul_tanh_model(tmp_path / "model.onnx"))
    runners, compare = setup()
    local = run_dataset(runners, DataLoader(seed=5, iterations=40, val_range=(-3.0, 3.0)),
                        compare, shard=(1, 2))
    from parity.distributed import run_dataset as run_distributed

    remote = run_distributed(setup, DataLoader(seed=5, iterations=40,
                                                       val_range=(-3.0, 3.0)),
                             n_workers=2, batch_size=4, shard=(1, 2))
    assert [it.index for it in remote.iterations] == list(range(1, 40, 2))
    assert remote.iterations == local.iterations


def test_cli_dask_run_equals_in_process_run(tmp_path):
    model = matmul_tanh_model(tmp_path / "model.onnx")
    data_npz = tmp_path / "npz"  # the client reads feeds without the model: no .npy
    data_npz.mkdir()
    for i, feed in enumerate(feeds(30, bad=7)):
        np.savez(data_npz / f"{i:03d}.npz", **feed)
    local_out, dask_out = tmp_path / "local.json", tmp_path / "dask.json"
    local = cli("run", model, "--pluginref", "--onnxrt", "--dataset", "--load-inputs", data_npz,
                "--atol", "1e-7", "--rtol", "1e-7", "--save-outputs", local_out)
    from parity.distributed import local_cluster

    # An existing cluster, reached by its scheduler's address (the local one that --dask starts
    # without an address is the one test_dask_generated_feeds_* uses).
    with local_cluster(n_workers=2) as cluster:
        remote = cli("run", model, "--pluginref", "--onnxrt", "--dask", cluster.scheduler_address,
                     "--dask-batch", "4", "--load-inputs", data_npz, "--atol", "1e-7", "--rtol",
                     "1e-7", "--save-outputs", dask_out)
    assert f"Dask | 2 worker(s) at {cluster.scheduler_address}" in remote.stdout
    assert local.returncode == remote.returncode == 1, remote.stdout + remote.stderr
    assert summary_text(remote.stdout) == summary_text(local.stdout)
    assert "Feed 7 failed to run on" in summary_text(remote.stdout)
    assert masked_json(dask_out) == masked_json(local_out)


def peak_rss_kib(args):
    """The peak resident memory of one `parity` run, as the kernel counted it."""
    probe = ("import resource, subprocess, sys\n"
             "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
             "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", probe, PARITY_CLI, *map(str, args)],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), int(out[1])


def test_memory_does_not_grow_with_the_dataset(tmp_path):
    # 1 MiB feeds: 40 of them or 400 of them take the same memory in a dataset run (a plain run
    # holds every feed and output: 400 MiB more).
    n = 1 << 18
    model = save_model(tmp_path / "tanh.onnx", [helper.make_node("Tanh", ["x"], ["y"])],
                       [tensor("x", TensorProto.FLOAT, [1, n])],
                       [tensor("y", TensorProto.FLOAT, [1, n])])
    common = [model, "--pluginref", "--onnxrt", "--dataset", "--silent"]
    status_small, small = peak_rss_kib(["run", *common, "--iterations", "40"])
    status_large, large = peak_rss_kib(["run", *common, "--iterations", "400"])
    assert status_small == status_large == 0
    assert large < small + 40 * 1024, (small, large)


def test_data_loader_pickles_with_every_option():
    # Dask sends a DataLoader to its workers by pickling it: the user's shapes and dtypes and
    # the deprecated ranges must travel, or the workers would make other feeds than this process.
    import pickle
    import warnings

    from parity.comparator import TensorMetadata

    metadata = TensorMetadata().add("x", np.float32, (3, 2, WIDTH)).add("n", None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        original = DataLoader(seed=9, iterations=3, input_metadata=metadata,
                              val_range={"": (-2.0, 2.0), "x": (0.5, None)},
                              int_range=(1, 4), float_range=(-1.0, 1.0))
    copy = pickle.loads(pickle.dumps(original))
    assert copy.input_metadata is not None
    assert str(copy.input_metadata) == str(original.input_metadata)
    assert pickle.dumps(copy) == pickle.dumps(original)
    model_inputs = TensorMetadata().add("x", np.float32, ("batch", "batch", WIDTH))
    original.input_metadata = model_inputs
    copy.input_metadata = model_inputs
    for i in range(3):
        a, b = original[i], copy[i]
        assert a["x"].shape == (3, 2, WIDTH)  # the user's shape, not the model's
        assert np.array_equal(a["x"], b["x"])


def test_cli_dask_takes_input_shapes_to_the_workers(tmp_path):
    rng = np.random.RandomState(0)
    w = (rng.standard_normal((WIDTH, WIDTH)) / np.sqrt(WIDTH)).astype(np.float32)
    model = save_model(tmp_path / "dynamic.onnx",
                       [helper.make_node("MatMul", ["x", "W"], ["m"]),
                        helper.make_node("Tanh", ["m"], ["y"])],
                       [tensor("x", TensorProto.FLOAT, ["batch", WIDTH])],
                       [tensor("y", TensorProto.FLOAT, ["batch", WIDTH])],
                       initializers=[numpy_helper.from_array(w, "W")])
    local_out, dask_out = tmp_path / "local.json", tmp_path / "dask.json"
    common = ["--pluginref", "--onnxrt", "--iterations", "6", "--input-shapes", "x:[5,16]",
              "--atol", "1e-6", "--rtol", "1e-6"]
    local = cli("run", model, *common, "--dataset", "--save-outputs", local_out)
    remote = cli("run", model, *common, "--dask", "--dask-workers", "2", "--dask-batch", "2",
                 "--save-outputs", dask_out)
    assert local.returncode == 0, local.stdout + local.stderr
    assert remote.returncode == 0, remote.stdout + remote.stderr
    assert summary_text(remote.stdout) == summary_text(local.stdout)
    assert masked_json(dask_out) == masked_json(local_out)
    saved = parity.json.load_json(str(dask_out))
    assert len(saved) == 2 and all(len(iterations) == 6 for _, iterations in saved)
    assert all(np.asarray(it["y"]).shape == (5, WIDTH) for _, its in saved for it in its)


def test_dask_batches_shrink_toward_the_end():
    from parity.distributed import _batches

    sizes = [len(b) for b in _batches(((i, None) for i in range(128)), 16, 128, 2)]
    assert sum(sizes) == 128 and max(sizes) == 16
    assert sizes[:5] == [16] * 5 and sizes[-4:] == [1, 1, 1, 1]
    assert sizes == sorted(sizes, reverse=True)
    flat = [i for b in _batches(((i, None) for i in range(128)), 16, 128, 2) for i, _ in b]
    assert flat == list(range(128))
    # Unknown length (a generator, files): every batch full but the last.
    assert [len(b) for b in _batches(((i, None) for i in range(10)), 4)] == [4, 4, 2]


def _affinity():
    return sorted(os.sched_getaffinity(0))


def test_local_cluster_workers_run_on_their_own_cores(tmp_path):
    from distributed import Client

    from parity.distributed import local_cluster, run_dataset as run_distributed

    setup = functools.partial(setup_runners, matmul_tanh_model(tmp_path / "model.onnx"))
    cpus = sorted(os.sched_getaffinity(0))
    with local_cluster(n_workers=2) as cluster, Client(cluster) as client:
        run_distributed(setup, DataLoader(iterations=4), client=client, batch_size=1)
        masks = list(client.run(_affinity).values())
    assert all(len(mask) == 1 for mask in masks), masks
    if len(cpus) >= 2:
        assert masks[0] != masks[1]
    assert all(mask[0] in cpus for mask in masks)
