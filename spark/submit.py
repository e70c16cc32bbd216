"""Entry point for spark-submit: the same export, on whatever master spark-submit chose.

    spark-submit --master yarn "$(python -c 'import changeprov.spark.submit as m; print(m.__file__)')" \\
        s3a://bucket/events/ --out s3a://bucket/prov/

Only the driver needs changeprov installed: the job is Spark SQL end to end, so executors run
no Python at all.
"""

from __future__ import annotations

import sys

from changeprov.cli import main

if __name__ == "__main__":
    sys.exit(main(["export", "--master", "", *sys.argv[1:]]))
