"""The task workers' own plumbing, below every app that gives them work: the worker's
heartbeat (`heartbeat`, the `WorkerHeartbeat` model), a task's way to hand its work back when
the worker is asked to stop (`stopping`), the registry through which the apps above say how
to recover the work a stopped worker left and what to tidy on a schedule (`registry`), and
`manage.py db_worker`, which drives them all. It imports no other app of the project."""
