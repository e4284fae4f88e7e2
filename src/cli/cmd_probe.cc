// bk gpu-probe (hidden): one raw NVML sample, for diagnosing telemetry on a
// real machine and for tests/gpu/run-on-gpu.sh. It ignores BK_GPU_SIM_FILE on
// purpose: the question it answers is "what does NVML say here?".

#include <fmt/format.h>
#include <time.h>

#include <nlohmann/json.hpp>

#include "base/json_opt.h"
#include "base/strings.h"
#include "cli/args.h"
#include "cli/context.h"
#include "gpu/device_json.h"
#include "gpu/nvml_source.h"

namespace bk::cli {
namespace {

using nlohmann::json;

double NowMs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

json DeviceJson(const gpu::DeviceSample& d, const gpu::DeviceReport& r) {
  json procs = json::array();
  for (const gpu::ProcessSample& p : d.processes) {
    procs.push_back({{"pid", p.pid},
                     {"uid", OptJson(p.uid)},
                     {"username", p.username},
                     {"command", p.command},
                     {"gpu_memory_mb", p.gpu_memory_mb},
                     {"sm_utilization_percent", OptJson(p.sm_utilization_percent)},
                     {"kind", p.kind},
                     {"host_start_id", p.host_start_id},
                     {"host_uid", OptJson(p.host_uid)},
                     {"identity_source", p.identity_source},
                     {"container_runtime", p.container_runtime},
                     {"container_id", p.container_id}});
  }
  json out = gpu::DeviceFieldsJson(d);
  out["process_utilization"] = r.process_utilization;
  out["memory_version"] = r.memory_version;
  out["process_list_version"] = r.process_list_version;
  out["notes"] = r.notes;
  out["processes"] = procs;
  return out;
}

std::string Cell(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : ""; }

}  // namespace

// Long on purpose: the probe prints what NVML says step by step, in the
// order it asked; each line depends on the answer before it.
Result<int> RunGpuProbe(Context& ctx, const std::vector<std::string>& args) {
  bool json_out = false, csv = false;
  std::optional<std::string> repeat_text;
  ArgSpec spec("bk gpu-probe", "Diagnostics: one NVML sample as bk sees it (ignores BK_GPU_SIM_FILE).");
  spec.Flag("--json", &json_out, "print the sample as JSON");
  spec.Flag("--csv", &csv,
            "print gpu,index,uuid,name,total,used,util and "
            "proc,pid,mib,gpu_uuid,uid,user,kind,identity,start lines");
  spec.Option("--repeat", &repeat_text, "sample N times and report the time per sample", "N");
  spec.Excludes("--json", "--csv");
  if (auto done = ParseOrHelp(ctx, spec, args)) return *done;
  BK_ASSIGN_OR_RETURN(int repeat, WholeNumberOption(repeat_text, 1, 10000, 1,
                                                    "--repeat takes a whole number from 1 to 10000"));

  gpu::NvmlSource& nvml = gpu::SharedNvml();
  const double wall0 = NowMs(CLOCK_MONOTONIC), cpu0 = NowMs(CLOCK_PROCESS_CPUTIME_ID);
  // Every NVML device, not just the configured count: this is a diagnosis.
  auto nvml_count = nvml.DeviceCount();
  const int count = nvml_count ? *nvml_count : ctx.config.policy.gpu_count;
  gpu::NvmlReport report;
  gpu::Snapshot snap = nvml.Sample(count, &report);
  const double first_wall = NowMs(CLOCK_MONOTONIC) - wall0,
               first_cpu = NowMs(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
  const double wall1 = NowMs(CLOCK_MONOTONIC), cpu1 = NowMs(CLOCK_PROCESS_CPUTIME_ID);
  for (int i = 1; i < repeat; ++i) snap = nvml.Sample(count, &report);
  const int more = repeat - 1;
  const double mean_wall = more > 0 ? (NowMs(CLOCK_MONOTONIC) - wall1) / more : 0.0;
  const double mean_cpu = more > 0 ? (NowMs(CLOCK_PROCESS_CPUTIME_ID) - cpu1) / more : 0.0;
  const int rc = snap.ok() ? 0 : 1;

  if (json_out) {
    json devices = json::array();
    for (size_t i = 0; i < snap.devices.size(); ++i)
      devices.push_back(
          DeviceJson(snap.devices[i], i < report.devices.size() ? report.devices[i] : gpu::DeviceReport{}));
    json doc = {{"schema", "gpubk.gpu-probe.v1"},
                {"ok", snap.ok()},
                {"state", gpu::NvmlStateName(report.state)},
                {"error", snap.error.empty() ? json() : json(snap.error)},
                {"library", report.library},
                {"driver_version", report.driver_version},
                {"nvml_device_count", report.device_count},
                {"configured_gpu_count", ctx.config.policy.gpu_count},
                {"devices", devices},
                {"timing",
                 {{"samples", repeat},
                  {"first_sample_wall_ms", first_wall},
                  {"first_sample_cpu_ms", first_cpu},
                  {"mean_sample_wall_ms", more > 0 ? json(mean_wall) : json()},
                  {"mean_sample_cpu_ms", more > 0 ? json(mean_cpu) : json()}}}};
    ctx.Print(doc.dump(2, ' ', false, json::error_handler_t::replace));
    return rc;
  }
  if (csv) {
    if (!snap.ok()) ctx.Print("error," + Printable(snap.error));
    for (const gpu::DeviceSample& d : snap.devices) {
      ctx.Print(fmt::format("gpu,{},{},{},{},{},{}", d.index, d.uuid, d.name, Cell(d.memory_total_mb),
                            Cell(d.memory_used_mb),
                            d.utilization_percent ? std::to_string(*d.utilization_percent) : ""));
      for (const gpu::ProcessSample& p : d.processes)
        ctx.Print(fmt::format("proc,{},{},{},{},{},{},{},{}", p.pid, p.gpu_memory_mb, d.uuid,
                              p.uid ? std::to_string(*p.uid) : "", p.username, p.kind, p.identity_source,
                              p.host_start_id));
    }
    return rc;
  }
  ctx.Print(fmt::format("NVML: {}{}", gpu::NvmlStateName(report.state),
                        snap.ok() ? fmt::format(" ({}, driver {})", report.library,
                                                report.driver_version.empty() ? "?" : report.driver_version)
                                  : ": " + Printable(snap.error)));
  for (size_t i = 0; i < snap.devices.size(); ++i) {
    const gpu::DeviceSample& d = snap.devices[i];
    ctx.Print(fmt::format("GPU {} {} {} mem={}/{} MiB util={} temp={} processes={}{}", d.index,
                          Printable(d.name), d.uuid.empty() ? "-" : d.uuid, Cell(d.memory_used_mb),
                          Cell(d.memory_total_mb),
                          d.utilization_percent ? fmt::format("{}%", *d.utilization_percent) : "?",
                          d.temperature_c ? fmt::format("{}C", *d.temperature_c) : "?", d.processes.size(),
                          d.process_telemetry ? "" : " (process list unavailable)"));
    for (const gpu::ProcessSample& p : d.processes)
      ctx.Print(fmt::format("  pid {} {} uid={} {} MiB {} {}", p.pid, p.kind,
                            p.uid ? std::to_string(*p.uid) : "?", p.gpu_memory_mb, Printable(p.username),
                            Printable(p.command.substr(0, 80))));
    if (i < report.devices.size())
      for (const std::string& n : report.devices[i].notes) ctx.Print("  note: " + Printable(n));
  }
  if (repeat > 1)
    ctx.Print(fmt::format("timing: first {:.2f} ms; then {:.3f} ms wall, {:.3f} ms CPU per sample",
                          first_wall, mean_wall, mean_cpu));
  return rc;
}

}  // namespace bk::cli
