#!/usr/bin/env python3
"""Step rewards of `agentrl inspect` output by kind of action.

Reads the text of one or more `agentrl inspect` runs (files, or stdin)
and prints the discriminator's mean reward of the expert's actions by
kind (the word before "[", as in calc[...] or answer[...]), and, for the
agent's samples that differ from the expert's, the mean of their reward
less the expert's in the same state, by the expert's kind and theirs:
whether the discriminator prefers one kind of action whatever the state.

    for s in $(seq 0 39); do
      bin/agentrl inspect --run RUNDIR --seed $s --untrained-discriminator
    done > inspect.txt
    python3 scripts/inspect-rewards.py inspect.txt
"""
import fileinput
import re
import statistics

EXPERT = re.compile(r"^\s+expert\s+(.*?)\s+\[reward ([-+\d.]+)\]$")
SAMPLE = re.compile(r"^\s+sample (.)\s+(.*?)\s+\[reward ([-+\d.]+)\]$")


def kind(action):
    m = re.search(r"(\w+)\[", action)
    return m.group(1) if m else "other"


def show(name, xs):
    if not xs:
        return
    above = sum(x > 0 for x in xs) / len(xs)
    print(f"{name:<56} n={len(xs):<4} mean {statistics.mean(xs):+.2f}  median {statistics.median(xs):+.2f}  above 0: {above:.2f}")


def main():
    expert_rewards = {}  # the expert action's kind -> rewards
    differences = {}  # (expert's kind, sample's kind) -> reward - expert's
    expert = None
    for line in fileinput.input():
        line = line.rstrip("\n")
        if m := EXPERT.match(line):
            expert = (kind(m.group(1)), float(m.group(2)))
            expert_rewards.setdefault(expert[0], []).append(expert[1])
        elif (m := SAMPLE.match(line)) and m.group(1) != "=" and expert:
            key = (expert[0], kind(m.group(2)))
            differences.setdefault(key, []).append(float(m.group(3)) - expert[1])
    if not expert_rewards:
        raise SystemExit("no rewards: is this `agentrl inspect` output of an irl run, or with --untrained-discriminator?")
    print(f"{sum(map(len, expert_rewards.values()))} states")
    for k, rs in sorted(expert_rewards.items()):
        show(f"expert's {k}: reward", rs)
    for (e, s), ds in sorted(differences.items()):
        show(f"agent's {s} where the expert's {e}: less the expert's", ds)


if __name__ == "__main__":
    main()
