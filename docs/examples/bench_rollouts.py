#!/usr/bin/env python3
"""A client of `bench serve` that plugs into TRL's GRPOTrainer as its
rollout_func. Python's standard library only.

bench runs the agent (its tools, MCP servers, sandbox) and scores each
attempt with hidden tests; the trainer gets, per attempt, the token ids the
model server sampled (never tokenised again), their logprobs, the mask of
the model's own tokens, the reward and the group's advantage.

    from bench_rollouts import BenchClient, make_rollout_func, bench_reward

    client = BenchClient("http://127.0.0.1:8420")
    trainer = GRPOTrainer(
        model=..., reward_funcs=[bench_reward],
        args=GRPOConfig(num_generations=4, ...),
        train_dataset=Dataset.from_dict({"prompt": ["recipe-trailing-dot", "phonebook-sort"]}),
        rollout_func=make_rollout_func(client, options={"temperature": 1.0}),
    )

make_rollout_func's keyword arguments are fields of every request
(docs/serve.md): options (sampling), model_digest (the weights every
attempt must be served by), endpoints (which of the service's model
servers to run on, e.g. those that have the new weights), arm, limits...

Each prompt of the dataset is a task id of the suite bench serve was
started with. TRL hands rollout_func each prompt num_generations times;
one request asks bench for every task of the batch with G equal to that
count. Run it alone to try a service:

    python3 bench_rollouts.py --url http://127.0.0.1:8420 --task recipe-trailing-dot --attempts 2
"""

import argparse
import json
import sys
import urllib.error
import urllib.request


class BenchError(RuntimeError):
    """What bench serve refused or failed, in its words."""


class BenchClient:
    """The HTTP API of bench serve (docs/serve.md)."""

    def __init__(self, url, timeout=6 * 3600):
        self.url = url.rstrip("/")
        self.timeout = timeout

    def _get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=60) as resp:
            return json.load(resp)

    def health(self):
        """Health and queue depth: GET /v1/health."""
        return self._get("/v1/health")

    def status(self, request_id):
        """A request's state: GET /v1/rollouts/{id}."""
        return self._get("/v1/rollouts/" + request_id)

    def cancel(self, request_id):
        """Cancel a request: DELETE /v1/rollouts/{id}. Its finished
        attempts stay stored."""
        req = urllib.request.Request(self.url + "/v1/rollouts/" + request_id, method="DELETE")
        with urllib.request.urlopen(req, timeout=60) as resp:
            return json.load(resp)

    def rollouts(self, tasks, attempts, **fields):
        """POST /v1/rollouts and yield its events as they come: accepted,
        started, one group per task as soon as its attempts are scored,
        then done (or error)."""
        body = dict(fields, tasks=list(tasks), attempts=attempts)
        req = urllib.request.Request(
            self.url + "/v1/rollouts",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            resp = urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as e:
            raise BenchError(json.load(e).get("error", str(e))) from None
        with resp:
            for line in resp:
                if line.strip():
                    yield json.loads(line)

    def groups(self, tasks, attempts, **fields):
        """The scored groups of a request, by task id, once all are in."""
        out = {}
        for ev in self.rollouts(tasks, attempts, **fields):
            if ev["event"] == "group":
                out[ev["task_id"]] = ev
            elif ev["event"] == "error":
                raise BenchError(ev["error"])
            elif ev["event"] == "done" and ev.get("canceled"):
                raise BenchError("request %s canceled: %s" % (ev["id"], ev.get("reason", "")))
        return out


def _task_of(prompt):
    """A prompt is a task id; a conversational prompt's last message holds it."""
    if isinstance(prompt, str):
        return prompt.strip()
    return prompt[-1]["content"].strip()


def make_rollout_func(client, **request_fields):
    """A rollout_func for TRL's GRPOTrainer. It takes the prompts (task
    ids, each repeated G times) and whatever else the trainer passes
    (args and processing_class, or the trainer), and returns per attempt
    prompt_ids, completion_ids, logprobs and env_mask (1 where the model
    sampled the token, 0 for tool results and other text the environment
    added), plus bench_reward and bench_advantage, which TRL hands on to
    the reward functions."""

    def rollout_func(prompts, *args, **kwargs):
        tasks = [_task_of(p) for p in prompts]
        counts = {}
        for t in tasks:
            counts[t] = counts.get(t, 0) + 1
        sizes = set(counts.values())
        if len(sizes) != 1:
            raise BenchError("every task must come the same number of times (G), got %s" % counts)
        groups = client.groups(list(counts), sizes.pop(), **request_fields)
        taken = {t: 0 for t in counts}
        out = {k: [] for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask", "bench_reward", "bench_advantage")}
        for t in tasks:
            if t not in groups:
                raise BenchError("no group came back for task %s" % t)
            attempts = groups[t]["attempts"]
            a = attempts[taken[t]]
            taken[t] += 1
            if "completion_ids" not in a:
                # Never tokenise stored text again: the ids would not be
                # those sampled, and the importance ratios would be wrong.
                raise BenchError("task %s attempt %d has no exact token data: %s" % (t, a["index"], a.get("tokens_missing", a.get("error", ""))))
            for k in ("prompt_ids", "completion_ids", "logprobs", "env_mask"):
                out[k].append(a[k])
            out["bench_reward"].append(float(a["reward"]))
            out["bench_advantage"].append(a["advantage"])
        return out

    return rollout_func


def bench_reward(prompts=None, completions=None, bench_reward=None, **kwargs):
    """The reward function to pair with make_rollout_func: bench's reward
    (hidden tests passed), as the rollout returned it."""
    return list(bench_reward)


def main():
    ap = argparse.ArgumentParser(description="Ask bench serve for a batch of rollouts, as TRL's rollout_func would, and check its shape.")
    ap.add_argument("--url", default="http://127.0.0.1:8420")
    ap.add_argument("--task", action="append", required=True, help="task id (repeatable)")
    ap.add_argument("--attempts", type=int, default=2, help="G, attempts per task")
    ap.add_argument("--temperature", type=float, default=None)
    ap.add_argument("--endpoint", action="append", help="run on this endpoint of the service only (repeatable; default all)")
    a = ap.parse_args()
    client = BenchClient(a.url)
    fields = {}
    if a.temperature is not None:
        fields["options"] = {"temperature": a.temperature}
    if a.endpoint:
        fields["endpoints"] = a.endpoint
    rollout = make_rollout_func(client, **fields)
    prompts = [t for t in a.task for _ in range(a.attempts)]
    batch = rollout(prompts, None, None)
    for i in range(len(prompts)):
        n = len(batch["completion_ids"][i])
        if len(batch["env_mask"][i]) != n or len(batch["logprobs"][i]) != n:
            raise SystemExit("attempt %d: %d completion ids, %d mask, %d logprobs" % (i, n, len(batch["env_mask"][i]), len(batch["logprobs"][i])))
    json.dump(
        {
            "health": client.health(),
            "attempts": len(prompts),
            "prompt_tokens": [len(p) for p in batch["prompt_ids"]],
            "completion_tokens": [len(c) for c in batch["completion_ids"]],
            "sampled_tokens": [sum(m) for m in batch["env_mask"]],
            "rewards": bench_reward(bench_reward=batch["bench_reward"]),
            "advantages": batch["bench_advantage"],
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()
