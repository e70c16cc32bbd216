"""DataHub jobs and their runs for the synthetic event generator: dataJob inputs/outputs and process instances.

``_DataHubJobs`` is a mixin of ``changeprov.generate._Gen``: the Airflow jobs that build datasets
(``dataJobInputOutput``) and their runs (``dataProcessInstance`` aspects, a STARTED run event now and a
COMPLETE one scheduled for later, with optional RUN EntityChangeEvents). It is apart from
``changeprov.generate_datahub`` because it is about other entities than datasets and is the only builder
that schedules a later line (``self._schedule``); it writes through that module's envelopes (``_mcl``,
``_ts_mcl``, ``_ece``).
"""

from __future__ import annotations

from changeprov.generate_state import _Holder, _uuid5, dumps


class _DataHubJobs:
    """DataHub dataJob and dataProcessInstance lines (families ``datahub-mcl``, ``datahub-ece``); mixed into
    ``_Gen``."""

    def _live_job(self):
        for _ in range(4):
            job = self.jobs[self.randrange(len(self.jobs))]
            if job[1].alive and not job[1].removed:
                return job
        return None

    def _job_inputs(self, ds):
        ins = [u for u in ds.upstreams if u.alive]
        if not ins and ds.idx > 0:
            u = self.ds_all[self.randrange(ds.idx)]
            if u.alive:
                ins = [u]
        return ins

    def _job_io(self, t) -> list:
        job = self._live_job()
        if job is None:
            return self._ds_create(t) if self.ds_created < self.ds_target else []
        urn, ds = job
        ins = self._job_inputs(ds)
        actor = "urn:li:corpuser:svc_airflow"
        edge = lambda u: {"destinationUrn": u, "created": {"time": t, "actor": actor},  # noqa: E731
                          "lastModified": {"time": t, "actor": actor}}
        value = {"inputDatasets": [u.urn for u in ins], "inputDatasetEdges": [edge(u.urn) for u in ins],
                 "outputDatasets": [ds.urn], "outputDatasetEdges": [edge(ds.urn)]}
        holder = self.job_by_ds.get(urn)
        if holder is None:
            holder = self.job_by_ds[urn] = _Holder(urn)
        return [self._mcl(holder, "dataJob", "dataJobInputOutput", dumps(value), t, actor, "airflow")]

    def _dpi_run(self, t) -> list:
        job = self._live_job()
        if job is None:
            return self._job_io(t)
        job_urn, ds = job
        ins = self._job_inputs(ds)
        self.counter += 1
        dpi = "urn:li:dataProcessInstance:" + _uuid5(f"{self.seed}/dpi/{self.counter}").replace("-", "")
        actor = "urn:li:corpuser:svc_airflow"
        run_id = "scheduled__%d" % t
        h = _Holder(dpi)
        out = [self._mcl(h, "dataProcessInstance", "dataProcessInstanceProperties", dumps(
            {"customProperties": {"run_id": run_id, "try_number": "1", "operator": "SnowflakeOperator"},
             "name": run_id, "type": "BATCH_SCHEDULED", "created": {"time": t, "actor": actor}}), t, actor, "airflow"),
               self._mcl(h, "dataProcessInstance", "dataProcessInstanceRelationships",
                         dumps({"parentTemplate": job_urn, "upstreamInstances": []}), t, actor, "airflow"),
               self._mcl(h, "dataProcessInstance", "dataProcessInstanceInput",
                         dumps({"inputs": [u.urn for u in ins]}), t, actor, "airflow"),
               self._mcl(h, "dataProcessInstance", "dataProcessInstanceOutput",
                         dumps({"outputs": [ds.urn]}), t, actor, "airflow")]
        t0 = t + 500
        if self.clock < t0:
            self.clock = t0
        out.append(self._ts_mcl(dpi, "dataProcessInstance", "dataProcessInstanceRunEvent", dumps(
            {"timestampMillis": t0, "partitionSpec": {"partition": "FULL_TABLE_SNAPSHOT", "type": "FULL_TABLE"},
             "status": "STARTED", "attempt": 1}), t0, actor))
        with_ece = self.random() < 0.5
        if with_ece:
            out.append(self._ece("dataProcessInstance", dpi, "RUN", "STARTED", t0, actor, None,
                                 {"attempt": 1, "dataJobUrn": job_urn}))
        dur = 60_000 + self.randrange(min(3_600_000, int(self.mean_gap * 20) + 1))
        ok = self.random() < 0.9
        self._schedule(t0 + dur, self._dpi_complete, dpi, job_urn, t0, dur, ok, with_ece)
        return out

    def _dpi_complete(self, t, dpi, job_urn, t0, dur, ok, with_ece) -> list:
        actor = "urn:li:corpuser:svc_airflow"
        res = "SUCCESS" if ok else "FAILURE"
        out = [self._ts_mcl(dpi, "dataProcessInstance", "dataProcessInstanceRunEvent", dumps(
            {"timestampMillis": t, "partitionSpec": {"partition": "FULL_TABLE_SNAPSHOT", "type": "FULL_TABLE"},
             "status": "COMPLETE", "attempt": 1, "result": {"type": res, "nativeResultType": "airflow"},
             "durationMillis": t - t0}), t, actor)]
        if with_ece:
            out.append(self._ece("dataProcessInstance", dpi, "RUN", "COMPLETED", t, actor, None,
                                 {"attempt": 1, "runResult": res, "dataJobUrn": job_urn}))
        return out
