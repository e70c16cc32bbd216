"""Fewer py4j round trips while the driver builds the mapping's Column trees.

Every ``pyspark.sql.functions`` call looks its JVM function up again: py4j asks the JVM what
``org.apache.spark.sql.functions`` is (one round trip), then whether ``lit`` is a member of it (a
second), and only then calls it (the third). The mappers make ~22k such calls, and pyspark's
list conversions add ~5k lookups of ``PythonUtils``; on the 2-core machine a round trip costs
~0.15 ms, so lookups were about a third of the ~30 s the driver spends building the plan.

:func:`remember_static_members` puts, into the instance dictionary of the ``JVMView`` that
pyspark uses, a ``JavaClass`` for each of those classes that keeps the static members it has
resolved. Python then finds the class and its members without asking the JVM again; each call
still goes to the JVM exactly as before (same method, same overload resolution there). Nothing
of pyspark or py4j is replaced: a new gateway starts with a plain view.
"""

from __future__ import annotations

from py4j.java_gateway import JavaClass, JavaMember, JVMView

#: how pyspark names the classes it calls static members of, and their fully qualified names
CLASSES = {
    "org.apache.spark.sql.functions": "org.apache.spark.sql.functions",
    "functions": "org.apache.spark.sql.functions",
    "PythonUtils": "org.apache.spark.api.python.PythonUtils",
    "PythonSQLUtils": "org.apache.spark.sql.api.python.PythonSQLUtils",
}


class _RememberingClass(JavaClass):
    """A JavaClass that keeps each static method it has looked up (classes and fields are not
    kept: a field's value may change)."""

    def __getattr__(self, name):
        member = JavaClass.__getattr__(self, name)
        if isinstance(member, JavaMember):
            self.__dict__[name] = member
        return member


def remember_static_members(jvm: JVMView) -> None:
    """Make ``getattr(jvm, name)`` for the classes of :data:`CLASSES` a local lookup, and their
    static methods too once used. Idempotent."""
    client = jvm._gateway_client
    for name, fqn in CLASSES.items():
        if not isinstance(jvm.__dict__.get(name), _RememberingClass):
            jvm.__dict__[name] = _RememberingClass(fqn, client)
