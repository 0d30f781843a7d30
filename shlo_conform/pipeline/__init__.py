"""The scoring pipeline: what happens between a selection of cases and a
results document, in the order a case meets it.

* planning — the order and grouping of cases (`plan`, programs, batches);
* shard — a deterministic share of that plan for one CI job;
* isolation — child processes with a budget (`Child`, `Jobs`), and how a
  job that did not return reads as a verdict;
* zygote, worker — the backend's process: forked from a template that
  imported the adapter once, serving compile and run requests;
* batching — many cases' programs in one module, one compile;
* runner — drives the workers: compile, run, restart, timeouts, verdicts;
* judging, input_flush — an output against its expectation;
* journal — verdicts kept as they arrive, resumed after an interrupt;
* scoring — the whole run on one backend, written as a results document;
* merge — shards' results documents into one;
* distributed — the optional cluster engine that spreads parcels of work.

Kept apart from the commands (shlo_conform/commands/), which only read
arguments and call into here."""
