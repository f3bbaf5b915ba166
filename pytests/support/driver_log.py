"""What the Spark driver logs while a block runs: the console lines a user would see.

The driver is a JVM of its own (pyspark starts it as a child process), so its standard error
is not this process's; its lines are caught where they are made, by a log4j appender added to
the root logger for the block, at the level the console prints (the adapter's
log4j2.properties: errors), each with its stack trace.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

APPENDER_NAME = "pytest-driver-log"
LAYOUT = "%p %c{1}: %m%n%ex"


@dataclass
class DriverLog:
    text: str = ""


@contextmanager
def driver_log(spark: SparkSession) -> Iterator[DriverLog]:
    """Catch the driver's error events until the block ends; the log's text then holds them."""
    jvm = spark.sparkContext._jvm
    core = jvm.org.apache.logging.log4j.core
    context = jvm.org.apache.logging.log4j.LogManager.getContext(False)
    config = context.getConfiguration()
    layout = core.layout.PatternLayout.newBuilder().withPattern(LAYOUT).build()
    writer = jvm.java.io.StringWriter()
    appender = core.appender.WriterAppender.createAppender(
        layout, None, writer, APPENDER_NAME, False, True
    )
    appender.start()
    config.addAppender(appender)
    root = config.getRootLogger()
    root.addAppender(appender, jvm.org.apache.logging.log4j.Level.ERROR, None)
    context.updateLoggers()
    log = DriverLog()
    try:
        yield log
    finally:
        root.removeAppender(APPENDER_NAME)
        context.updateLoggers()
        appender.stop()
        log.text = writer.toString()
