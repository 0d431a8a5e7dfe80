# Two commands on a fresh machine (Python 3.11 and Java 17):
#   make demo   set up, land sample messages of every format, dbt build, print a summary
#   make test   set up, then the fast test tier (ruff, pytest -m "not e2e" with sqlfluff beside it:
#               dbt builds on the embedded Spark); make test-all adds the end-to-end tier (CONTRIBUTING.md)
# and a Spark cluster on this machine for target `cluster` (docs/targets.md):
#   make cluster / make cluster-stop
VENV := .venv
PYTHON := $(VENV)/bin/python

.PHONY: setup browser cluster-packages cluster cluster-stop demo test test-e2e test-all docs clean

setup: $(VENV)/.installed $(VENV)/.spark-jars $(VENV)/spark-classes.jsa

# The docs-site test drives headless Chromium (Debian's package).
browser:
	@command -v chromium >/dev/null || { \
	  if [ "$$(id -u)" = 0 ]; then echo "make: installing Debian's chromium (apt-get): the docs-site test opens the site in headless Chromium"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; \
	  else echo "the docs test needs Debian's chromium: sudo apt-get install chromium"; exit 1; fi; }

# The cluster's metastore database and its JDBC driver (Debian's packages).
CLUSTER_PACKAGES := postgresql libpostgresql-jdbc-java
cluster-packages:
	@{ ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && [ -f /usr/share/java/postgresql.jar ]; } || { \
	  if [ "$$(id -u)" = 0 ]; then echo "make: installing Debian's $(CLUSTER_PACKAGES) (apt-get): target cluster's metastore database and its JDBC driver"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CLUSTER_PACKAGES); \
	  else echo "target cluster needs Debian's $(CLUSTER_PACKAGES): sudo apt-get install $(CLUSTER_PACKAGES)"; exit 1; fi; }

cluster: setup cluster-packages
	$(PYTHON) scripts/cluster.py start

cluster-stop: setup
	$(PYTHON) scripts/cluster.py stop

$(VENV)/.installed: requirements.txt pyproject.toml
	@command -v java >/dev/null || { echo "Java 17 is required (apt-get install openjdk-17-jre-headless)"; exit 1; }
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -r requirements.txt
	$(PYTHON) -m pip install --quiet --no-deps -e .
	touch $@

# Delta Lake's jars and Spark's Kafka source, from Maven Central through Spark's Ivy resolution, once,
# into PySpark's Spark
# (src/cdc_dbt_spark/spark_jars.py: the coordinate follows requirements.txt's pins).
$(VENV)/.spark-jars: $(VENV)/.installed src/cdc_dbt_spark/spark_jars.py
	$(PYTHON) -m cdc_dbt_spark.spark_jars
	touch $@

# The classes every embedded Spark process loads at start, archived once (half its start-up;
# profiles.yml names the file, src/cdc_dbt_spark/class_archive.py says how it is made).
$(VENV)/spark-classes.jsa: $(VENV)/.spark-jars
	$(PYTHON) -m cdc_dbt_spark.class_archive

demo: setup
	$(PYTHON) scripts/demo.py

# Apache Kafka's broker for the Kafka tests, from Maven Central through Ivy, once (src/cdc_testkit/kafka_broker.py)
$(VENV)/kafka-broker/resolved.txt: $(VENV)/.installed src/cdc_testkit/kafka_broker.py
	$(PYTHON) -m cdc_testkit.kafka_broker
	touch $@

# The fast tier: lint, then every test that needs no outside service (run_tests.sh makes the class
# archive itself, beside the lint)
test: $(VENV)/.installed $(VENV)/.spark-jars
	scripts/run_tests.sh fast

# The end-to-end tier alone: the Thrift server, the cluster (PostgreSQL), the Kafka broker (its jars from
# Maven Central), killed processes, the fresh-clone demo and the docs site in Chromium
test-e2e: setup $(VENV)/kafka-broker/resolved.txt browser cluster-packages
	scripts/run_tests.sh e2e

# Both tiers, the fast one first (what CI runs)
test-all: test test-e2e

docs: setup
	$(VENV)/bin/dbt docs generate --profiles-dir profiles && $(VENV)/bin/dbt docs serve --profiles-dir profiles

clean:
	rm -rf .spark artifacts target logs
