#include "debug/job_runner.h"

#include <algorithm>
#include <map>

#include "runtime/core/error.h"

namespace vkg::debug {

std::vector<JobPlace> place_jobs(int jobs, const std::vector<std::string>& devices, const vk::DeviceOptions& options) {
  VKG_CHECK(jobs >= 1, "--jobs must be at least 1, not " << jobs);
  const std::vector<vk::DeviceInfo> all = vk::list_devices(options);
  const std::vector<std::string> selectors = devices.empty() ? std::vector<std::string>{options.device} : devices;
  std::vector<size_t> chosen;
  std::map<size_t, unsigned> jobs_on;
  for (int k = 0; k < jobs; ++k) {
    chosen.push_back(vk::select_device(all, selectors[size_t(k) % selectors.size()]));
    ++jobs_on[chosen.back()];
  }
  std::vector<JobPlace> places;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (size_t index : chosen) {
    const vk::DeviceInfo& info = all[index];
    const bool cpu = info.type == DeviceType::Cpu;
    VKG_CHECK(cpu || jobs_on[index] == 1,
              jobs_on[index] << " jobs on GPU " << index << " (" << info.name
                             << "): two timing builds on one GPU time each other; give each job its own device "
                                "with --devices, or fewer --jobs");
    places.push_back(
        {std::to_string(index), info.name, cpu && jobs_on[index] > 1 ? std::max(1u, cores / jobs_on[index]) : 0});
  }
  return places;
}

LocalRunner::LocalRunner(std::vector<JobPlace> places) : places_(std::move(places)), threads_(places_.size()) {}

LocalRunner::~LocalRunner() { stop(); }

std::string LocalRunner::where(size_t slot) const {
  return "job " + std::to_string(slot) + " on " + places_.at(slot).name;
}

std::vector<std::string> LocalRunner::env(size_t slot) const {
  const JobPlace& place = places_.at(slot);
  std::vector<std::string> e;
  if (!place.device.empty()) e.push_back("VKGRAPHY_DEVICE=" + place.device);
  if (place.threads > 0) e.push_back("LP_NUM_THREADS=" + std::to_string(place.threads));
  return e;
}

void LocalRunner::start(size_t slot, const JobSpec& spec) {
  if (threads_.at(slot).joinable()) threads_[slot].join();  // the place's last job, finished
  threads_[slot] = std::thread([this, slot, spec] {
    const auto begin = std::chrono::steady_clock::now();
    Finished f;
    f.slot = slot;
    try {
      f.passed = run_job(spec);
    } catch (...) {
      f.error = std::current_exception();
    }
    f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    std::lock_guard lock(m_);
    finished_.push_back(std::move(f));
    cv_.notify_all();
  });
}

std::vector<JobRunner::Finished> LocalRunner::wait(std::chrono::milliseconds up_to) {
  std::unique_lock lock(m_);
  cv_.wait_for(lock, up_to, [this] { return !finished_.empty(); });
  return std::exchange(finished_, {});
}

std::vector<JobRunner::Finished> LocalRunner::stop() {
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  std::lock_guard lock(m_);
  return std::exchange(finished_, {});
}

}  // namespace vkg::debug
