"""`profile-lake watch`: the pipeline in one long-lived process, run as files land.

docs/watch.md says how and why."""
