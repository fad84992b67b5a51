"""Demo data: a deterministic agenda of the Netherlands and Belgium, its festivals and its people,
for `agenda demo` and `agenda demo-data` (and the benchmarks)."""
