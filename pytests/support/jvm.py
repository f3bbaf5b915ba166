"""JVM flags for the tests' Spark drivers (PROFILE_LAKE_JVM_OPTIONS, profiles/profiles.yml).

The tests' queries read a few rows, so a driver's CPU goes to planning and to the JIT rather than
to data. C1 alone compiles quickly and never spends a core on C2 compiles that a test JVM would
not live long enough to repay; the serial collector keeps GC to one thread on 2 cores. Measured
as JVM CPU seconds for `dbt test` on the sample lake (159 data tests, codegen off): 118 s with
the default flags, 97 s with C1 only, 88 s with C1 only and the serial collector. A C1 run once
died with "Out of space in CodeCache" on the default cache; none has with 512 MB.

A new driver loads about 35,000 classes from Spark's, Delta's and Hive's jars; the tests trust
those jars, so the JVM skips verifying their bytecode. Measured as JVM CPU seconds of a `dbt
build` subprocess (a new JVM) of the records models on the sample lake with nothing new: 69, 75
and 69 s without verification, 75 to 82 s (four runs) with it.
"""

from profile_lake.techniques import QUICK_JIT_OPTIONS

# the quick compiler and collector a run on a small lake takes anyway (profile_lake.techniques),
# whatever the lake, and no verification of the jars' bytecode
TEST_JVM_OPTIONS = " ".join(
    (*QUICK_JIT_OPTIONS, "-XX:+UnlockDiagnosticVMOptions", "-XX:-BytecodeVerificationRemote")
)
