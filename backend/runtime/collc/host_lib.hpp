// collc host library runtime: the communicator behind `collc emit --target host --lib NAME`.
//
// A generated library (libNAME.so) holds one or more verified kernels (one per .coll file)
// and this communicator. The application creates it once for P ranks and then calls the
// collectives from its own threads, one thread per rank at a time, back to back:
//
//   * Memory. One symmetric window per rank (64-byte aligned, allocated and zeroed ONCE by
//     the communicator) holds every buffer of every collective: the credit signals (one
//     instance, reused by every call — the verified back-to-back contract), value signals and
//     `reused` windows. The communicator owns them. The caller owns its own buffers: a call
//     stages the caller's input into the window on the calling thread before the kernel and
//     copies the output back after it — exactly what the verifier's host does between calls
//     (stage the next payload, check the output, no barrier). A `per call` window or value
//     signal is held as k instances used in rotation (a collective's call c on a rank uses
//     instance c % k), packaged only when the protocol is verified with that reuse distance
//     (Protocol::with_per_call_rotation).
//   * Execution. The kernel runs on the calling thread (block 0); a protocol with blocks
//     runs blocks 1..C-1 on threads started for the call. Signal atomics and fences are the
//     CPU runtime's (collc/pto_comm_cpu.hpp).
//   * Bad input. Every call checks its arguments before touching the window; a bad argument
//     on a valid (communicator, rank) poisons the communicator: the failure is recorded, peers
//     blocked in a TWAIT of any call unwind at once and return COLLC_LIB_EBROKEN with the
//     first failure's text. Nothing hangs: a wait that is never satisfied ends after the
//     communicator's wait timeout with COLLC_LIB_ETIMEOUT.
//   * Recovery. After a failure (a bad argument, a mismatch, a timeout, on any rank) a rank
//     that has not returned from a call since returns EBROKEN at once; then the next call of
//     each rank recovers the communicator: it waits, up to the wait timeout, until
//     every rank has come to its own next call (so no rank is inside a call); the last to
//     come zeroes every window, ring and call count and clears the failure; then every call
//     runs from the state of creation. A rank that does not come within the wait timeout
//     makes the recovery fail: the communicator then refuses every later call (EBROKEN);
//     free it.
//   * Same collective on every rank. Each rank counts its calls (all collectives of the
//     communicator together) and, before its kernel, publishes (call index, collective id,
//     count) in its slot of a 64-entry ring and reads its peers' entries for the same index.
//     Two ranks whose call k differ are detected by at least one of them (both store before
//     they load, sequentially consistent): COLLC_LIB_EMISMATCH, and the communicator is
//     poisoned, which frees a peer already waiting inside its kernel.
//   * Counts per call. An allreduce or broadcast whose data window is f32[n] for a
//     parameter n that sizes nothing else (Coll::size_param) has its window sized once for
//     the configured n; each call passes its own count, the generated glue re-runs the
//     collective's configure function with n = count (domain and every `require` checked,
//     else EDOMAIN) and hands the kernel those scalars. A call whose count differs from the
//     collective's previous call on this rank first waits until every rank has entered it
//     (every earlier call has ended on every rank, every credit is back at zero), so the
//     protocol starts from the state it was verified from; calls at one count run back to
//     back, as verified.

#ifndef COLLC_HOST_LIB_HPP
#define COLLC_HOST_LIB_HPP

#include "collc/pto_comm.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace collc {
namespace lib {

// Status codes (the generated header repeats them as NAME_OK, NAME_EINVAL, ...).
enum Status : int {
    kOk = 0,
    kEInval = 1,     // null communicator/buffer pointer, rank outside 0..P-1
    kEDomain = 2,    // P or a parameter outside the verified domain, a `require` fails, a root differs
    kESize = 3,      // a buffer smaller than the collective needs
    kEMismatch = 4,  // ranks called different collectives at the same call index
    kETimeout = 5,   // a wait was not satisfied within the wait timeout
    kEKernel = 6,    // a runtime check inside the kernel failed
    kEBroken = 7,    // the communicator failed earlier (another rank's error)
    kEBusy = 8,      // this rank is already in a call (on another thread)
    kESystem = 9,    // allocation or thread creation failed
    kEResidue = 10,  // comm_free found credit cells not back at 0
};

// The calling thread's last error message (what NAME_last_error returns).
inline std::string& last_error() {
    thread_local std::string s;
    return s;
}

__attribute__((format(printf, 2, 3))) inline int fail(int code, const char* fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    last_error() = buf;
    return code;
}

using KernelFn = void (*)(int64_t*);

// One buffer of a collective's args block.
struct BufferSpec {
    std::string name;  // "collective.buffer", for diagnostics
    uint64_t bytes = 0;
    uint32_t kind = 0;  // 0 data, 1 credit signal
    uint32_t instances = 1;  // > 1: a `per call` buffer rotated over this many instances
};

// One collective of the library, configured for the communicator's P and parameters.
struct CollSpec {
    std::string name;
    KernelFn kernel = nullptr;
    std::vector<BufferSpec> buffers;  // args order
    std::vector<int64_t> scalars;     // args order (P first)
    int64_t max_calls = 0;            // `calls <= N` of the protocol (0: no bound)
    std::string calls_decl;           // "calls <= N (file.coll:LINE)", for the refusal
    int32_t blocks = 1;
};

constexpr int kRing = 64;

// A ring entry: bits 40..63 (call index + 1) mod 2^24, bits 32..39 collective id + 1, bits
// 0..31 the call's count mod 2^32 (0 for a collective whose count is fixed).
inline uint64_t ring_entry(int64_t k, int c, int64_t count) {
    return (static_cast<uint64_t>(k + 1) & 0xffffffu) << 40 | (static_cast<uint64_t>(c + 1) & 0xffu) << 32 |
           (static_cast<uint64_t>(count) & 0xffffffffu);
}
inline bool ring_same_call(uint64_t e, int64_t k) { return (e >> 40) == (static_cast<uint64_t>(k + 1) & 0xffffffu); }

struct alignas(64) RankSlot {
    std::atomic<uint64_t> ring[kRing];  // entry(call index, collective id, count)
    std::atomic<int> busy{0};
    int64_t calls = 0;  // calls entered (written by the rank's calling thread only)
    RankSlot() {
        for (auto& e : ring) e.store(0, std::memory_order_relaxed);
    }
};

class Comm {
public:
    Comm() = default;
    Comm(const Comm&) = delete;
    Comm& operator=(const Comm&) = delete;
    ~Comm() {
        for (uint8_t* w : windows_) std::free(w);
    }

    // Lays out and allocates every rank's window (zeroed once). Returns a status.
    int init(int32_t nranks, std::vector<CollSpec> colls, int64_t wait_timeout_ms) {
        if (nranks < 1 || nranks > rt::kMaxRanks)
            return fail(kEDomain, "nranks %d outside 1..=%d (the CPU runtime's limit)", nranks, rt::kMaxRanks);
        nranks_ = nranks;
        colls_ = std::move(colls);
        uint64_t end = 0;
        for (const CollSpec& c : colls_) {
            std::vector<uint64_t> offs;
            for (const BufferSpec& b : c.buffers) {
                const uint64_t off = (end + 63) / 64 * 64;
                const uint64_t stride = (b.bytes + 63) / 64 * 64;
                const uint64_t inst = b.instances < 1 ? 1 : b.instances;
                offs.push_back(off);
                end = off + stride * (inst - 1) + b.bytes;
                names_.push_back(b.name);
                infos_.push_back(rt::BufferInfo{nullptr, off, b.bytes, b.kind, stride, inst});
            }
            offsets_.push_back(offs);
        }
        for (size_t i = 0; i < infos_.size(); ++i) infos_[i].name = names_[i].c_str();
        window_bytes_ = (end + 63) / 64 * 64 + 64;
        for (int32_t r = 0; r < nranks; ++r) {
            uint8_t* w = static_cast<uint8_t*>(std::aligned_alloc(4096, (window_bytes_ + 4095) / 4096 * 4096));
            if (w == nullptr) return fail(kESystem, "cannot allocate a %llu-byte window", (unsigned long long)window_bytes_);
            std::memset(w, 0, window_bytes_);
            windows_.push_back(w);
            run_.windows[r] = w;
        }
        run_.nranks = nranks;
        run_.nblocks = 1;
        run_.window_bytes = window_bytes_;
        run_.buffers = infos_.data();
        run_.nbuffers = static_cast<int32_t>(infos_.size());
        run_.twait_timeout_ms = wait_timeout_ms > 0 ? wait_timeout_ms : rt::env_twait_timeout_ms();
        ctx_.resize(static_cast<size_t>(nranks));
        for (int32_t r = 0; r < nranks; ++r) {
            CommContext& c = ctx_[static_cast<size_t>(r)];
            std::memset(&c, 0, sizeof c);
            c.rankId = r;
            c.rankSize = nranks;
            for (int32_t pe = 0; pe < nranks; ++pe) c.windowsIn[pe] = reinterpret_cast<uint64_t>(windows_[static_cast<size_t>(pe)]);
        }
        slots_.reset(new RankSlot[static_cast<size_t>(nranks)]);
        rec_here_.assign(static_cast<size_t>(nranks), 0);
        seen_.assign(static_cast<size_t>(nranks), 0);
        coll_calls_.assign(static_cast<size_t>(nranks) * colls_.size(), 0);
        prev_count_.assign(static_cast<size_t>(nranks) * colls_.size(), 0);
        return kOk;
    }

    int32_t nranks() const { return nranks_; }

    // Address of instance `inst` of buffer `b` of collective `c` in rank `r`'s window.
    uint8_t* buffer(int c, int b, int32_t r, uint64_t inst = 0) const {
        const BufferSpec& bs = colls_[static_cast<size_t>(c)].buffers[static_cast<size_t>(b)];
        const uint64_t stride = (bs.bytes + 63) / 64 * 64;
        const uint64_t n = bs.instances < 1 ? 1 : bs.instances;
        return windows_[static_cast<size_t>(r)] + offsets_[static_cast<size_t>(c)][static_cast<size_t>(b)] + stride * (inst % n);
    }

    // Entry checks every call makes first: a usable communicator and rank (after a failure,
    // the recovery).
    int enter(int32_t rank) {
        if (rank < 0 || rank >= nranks_) return fail(kEInval, "rank %d outside 0..%d", rank, nranks_ - 1);
        if (run_.aborted.load(std::memory_order_acquire) != 0) {
            // A rank that has not returned from a call since the failure returns EBROKEN at
            // once (a rank that failed may be in another collective before its next call);
            // its next call recovers.
            if (seen_[static_cast<size_t>(rank)] == 0) {
                seen_[static_cast<size_t>(rank)] = 1;
                return broken();
            }
            const int s = recover(rank);
            if (s != kOk) return s;
        }
        if (slots_[rank].busy.exchange(1, std::memory_order_acq_rel) != 0) {
            return poison(kEBusy, "rank %d is already in a call on another thread (one call per rank at a time)", rank);
        }
        return kOk;
    }

    // Releases the rank after enter() (every path that returned kOk from enter()); a call
    // that ends after a failure has seen it (the rank's next call recovers).
    void leave(int32_t rank) {
        if (run_.aborted.load(std::memory_order_acquire) != 0) seen_[static_cast<size_t>(rank)] = 1;
        slots_[rank].busy.store(0, std::memory_order_release);
    }

    // Records the first failure, frees every waiter, and sets this thread's message.
    __attribute__((format(printf, 3, 4))) int poison(int code, const char* fmt, ...) {
        char buf[1024];
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        {
            std::lock_guard<std::mutex> lock(run_.mu);
            if (run_.fail_kind == rt::FailKind::None) {
                run_.fail_kind = rt::FailKind::KernelError;
                run_.fail_text = buf;
                fail_code_ = code;
            }
        }
        run_.aborted.store(1, std::memory_order_release);
        last_error() = buf;
        return code;
    }

    int broken() {
        std::lock_guard<std::mutex> lock(run_.mu);
        last_error() = "the communicator failed earlier and cannot be used (free it): " + run_.fail_text;
        return kEBroken;
    }

    // One call of collective `c` by `rank` (after enter()). `stage` and `collect` run on the
    // calling thread before and after the kernel, with this rank's buffer addresses.
    // `count`: the call's element count (0 for a collective whose count is fixed); `scalars`:
    // the kernel's scalars for that count (nullptr: the ones of creation).
    template <class Stage, class Collect>
    int call(int c, int32_t rank, int64_t count, const int64_t* scalars, Stage stage, Collect collect) {
        const CollSpec& cs = colls_[static_cast<size_t>(c)];
        RankSlot& me = slots_[rank];
        const int64_t done = coll_calls_[static_cast<size_t>(rank) * colls_.size() + static_cast<size_t>(c)];
        if (cs.max_calls > 0 && done >= cs.max_calls) {
            // Refused before anything is published: the communicator stays usable.
            return fail(kEDomain, "%s: call %lld on rank %d refused: past %s, the verified domain", cs.name.c_str(),
                        static_cast<long long>(done + 1), rank, cs.calls_decl.c_str());
        }
        const int64_t k = me.calls++;
        const uint64_t entry = ring_entry(k, c, count);
        me.ring[k % kRing].store(entry, std::memory_order_seq_cst);
        for (int32_t q = 0; q < nranks_; ++q) {
            if (q == rank) continue;
            const uint64_t e = slots_[q].ring[k % kRing].load(std::memory_order_seq_cst);
            if (ring_same_call(e, k) && e != entry) {
                const int other = static_cast<int>((e >> 32) & 0xff) - 1;
                return poison(kEMismatch, "call %lld: rank %d called %s with count %lld but rank %d called %s with count %lld (every rank must call the same collectives with the same counts in the same order)",
                              static_cast<long long>(k), rank, cs.name.c_str(), static_cast<long long>(count), q,
                              other >= 0 && other < static_cast<int>(colls_.size()) ? colls_[static_cast<size_t>(other)].name.c_str() : "?",
                              static_cast<long long>(e & 0xffffffffu));
            }
        }
        int64_t& prev = prev_count_[static_cast<size_t>(rank) * colls_.size() + static_cast<size_t>(c)];
        const bool fresh = prev != 0 && prev != count;
        prev = count;
        if (fresh) {
            const int s = await_entered(rank, k);
            if (s != kOk) return s;
        }
        // This collective's own call index on this rank: the protocol's `call`, and the
        // instance of its rotated `per call` buffers.
        const int64_t kc = coll_calls_[static_cast<size_t>(rank) * colls_.size() + static_cast<size_t>(c)]++;
        std::vector<uint8_t*> bufs;
        std::vector<int64_t> args;
        for (size_t b = 0; b < cs.buffers.size(); ++b) {
            bufs.push_back(buffer(c, static_cast<int>(b), rank, static_cast<uint64_t>(kc)));
            args.push_back(reinterpret_cast<int64_t>(bufs.back()));
        }
        for (size_t i = 0; i < cs.scalars.size(); ++i) args.push_back(scalars != nullptr ? scalars[i] : cs.scalars[i]);
        args.push_back(reinterpret_cast<int64_t>(&ctx_[static_cast<size_t>(rank)]));
        stage(bufs.data());
        const int32_t C = cs.blocks;
        std::vector<std::thread> extra;
        std::vector<int> st(static_cast<size_t>(C), kOk);
        auto block = [&](int32_t b) {
            rt::ThreadState ts;
            ts.run = &run_;
            ts.rank = rank;
            ts.block = b;
            ts.nblocks = C;
            ts.call = static_cast<int32_t>(kc);
            rt::ThreadState* saved = rt::tl_thread;
            rt::tl_thread = &ts;
            std::vector<int64_t> a = args;  // the kernel reads its own copy
            try {
                cs.kernel(a.data());
            } catch (const rt::RunAborted&) {
                st[static_cast<size_t>(b)] = kEBroken;
            } catch (...) {
                st[static_cast<size_t>(b)] = kEKernel;
            }
            rt::tl_thread = saved;
        };
        try {
            for (int32_t b = 1; b < C; ++b) extra.emplace_back(block, b);
        } catch (const std::exception& e) {
            for (std::thread& t : extra) t.join();
            return poison(kESystem, "cannot start a block thread: %s", e.what());
        }
        block(0);
        for (std::thread& t : extra) t.join();
        for (int s : st) {
            if (s != kOk) return failed_call(rank, kc);
        }
        collect(bufs.data());
        return kOk;
    }

    // Credit cells of every rank not back at 0 (call when no call is in flight).
    uint64_t residue(std::string* first) const {
        uint64_t n = 0;
        for (int32_t r = 0; r < nranks_; ++r) {
            for (const rt::BufferInfo& bi : infos_) {
                if (bi.kind != 1) continue;
                const int32_t* cells = reinterpret_cast<const int32_t*>(windows_[static_cast<size_t>(r)] + bi.offset);
                for (uint64_t j = 0; j < bi.bytes / 4; ++j) {
                    if (cells[j] == 0) continue;
                    if (n == 0 && first != nullptr) {
                        *first = std::string(bi.name) + "[" + std::to_string(j) + "]@rank" + std::to_string(r) + "=" + std::to_string(cells[j]);
                    }
                    ++n;
                }
            }
        }
        return n;
    }

    bool is_broken() const { return run_.aborted.load(std::memory_order_acquire) != 0; }

private:
    // After a failure: waits until every rank has come to its next call (each here, none in
    // a call), the last one resetting the communicator to its state of creation; EBROKEN
    // for good if a rank does not come within the wait timeout.
    int recover(int32_t rank) {
        std::unique_lock<std::mutex> lock(rec_mu_);
        if (dead_) return fail(kEBroken, "the communicator's recovery failed earlier (free it): %s", dead_why_.c_str());
        if (rec_here_[static_cast<size_t>(rank)] != 0)
            return fail(kEBusy, "rank %d is already recovering on another thread (one call per rank at a time)", rank);
        rec_here_[static_cast<size_t>(rank)] = 1;
        const uint64_t gen = rec_gen_;
        if (++rec_count_ == nranks_) {
            reset();
            rec_count_ = 0;
            rec_here_.assign(rec_here_.size(), 0);
            ++rec_gen_;
            rec_cv_.notify_all();
            return kOk;
        }
        const auto limit = std::chrono::milliseconds(run_.twait_timeout_ms);
        if (rec_cv_.wait_for(lock, limit, [&] { return rec_gen_ != gen || dead_; }) && !dead_) return kOk;
        if (!dead_) {
            dead_ = true;
            dead_why_ = "rank " + std::to_string(rank) + " waited " + std::to_string(run_.twait_timeout_ms) +
                        " ms for every rank to come to its next call after the failure (" + run_.fail_text + ")";
            rec_cv_.notify_all();
        }
        return fail(kEBroken, "recovery failed: %s; the communicator cannot be used again (free it)", dead_why_.c_str());
    }

    // The state of creation (every rank in recover(), under rec_mu_): windows, rings and
    // call counts zeroed, the failure cleared.
    void reset() {
        for (uint8_t* w : windows_) std::memset(w, 0, window_bytes_);
        for (int32_t r = 0; r < nranks_; ++r) {
            for (auto& e : slots_[r].ring) e.store(0, std::memory_order_relaxed);
            slots_[r].calls = 0;
        }
        coll_calls_.assign(coll_calls_.size(), 0);
        prev_count_.assign(prev_count_.size(), 0);
        seen_.assign(seen_.size(), 0);
        std::lock_guard<std::mutex> lock(run_.mu);
        run_.fail_kind = rt::FailKind::None;
        run_.fail_wait = rt::WaitRecord{};
        run_.fail_text.clear();
        run_.notes.clear();
        fail_code_ = 0;
        run_.aborted.store(0, std::memory_order_release);
    }

    // Waits until every rank has entered call `k` (published its ring entry for it): every
    // earlier call has ended on every rank. A failure elsewhere ends the wait (EBROKEN), and
    // so does the wait timeout (ETIMEOUT, poisoning the communicator).
    int await_entered(int32_t rank, int64_t k) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto limit = std::chrono::milliseconds(run_.twait_timeout_ms);
        for (long polls = 0;; ++polls) {
            bool all = true;
            for (int32_t q = 0; q < nranks_ && all; ++q)
                all = q == rank || ring_same_call(slots_[q].ring[k % kRing].load(std::memory_order_seq_cst), k);
            if (all) return kOk;
            if (run_.aborted.load(std::memory_order_acquire) != 0) return broken();
            if (std::chrono::steady_clock::now() - t0 >= limit)
                return poison(kETimeout, "rank %d: call %lld changes the count, but not every rank entered it within the wait timeout",
                              rank, static_cast<long long>(k));
            if (polls < 100) {
                std::this_thread::yield();
            } else {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            }
        }
    }

    // The kernel of `rank`'s call `k` unwound: its own wait timed out (ETIMEOUT), its own
    // runtime check failed (EKERNEL), or another rank's failure freed it (EBROKEN).
    int failed_call(int32_t rank, int64_t k) {
        std::lock_guard<std::mutex> lock(run_.mu);
        const rt::WaitRecord& w = run_.fail_wait;
        const std::string mine = "rank " + std::to_string(rank) + " (block ";
        int code = kEBroken;
        if (fail_code_ != 0) {
            code = kEBroken;  // poisoned by another call's bad argument
        } else if (run_.fail_kind == rt::FailKind::TwaitTimeout && w.rank == rank && w.call == k) {
            code = kETimeout;
        } else if (run_.fail_kind == rt::FailKind::KernelError && run_.fail_text.compare(0, mine.size(), mine) == 0) {
            code = kEKernel;
        }
        last_error() = code == kEBroken ? "the communicator failed: " + run_.fail_text : run_.fail_text;
        if (!run_.notes.empty()) last_error() += "\n" + run_.notes;
        return code;
    }

    int32_t nranks_ = 0;
    std::vector<CollSpec> colls_;
    std::vector<std::vector<uint64_t>> offsets_;
    std::vector<std::string> names_;
    std::vector<rt::BufferInfo> infos_;
    uint64_t window_bytes_ = 0;
    std::vector<uint8_t*> windows_;
    std::vector<CommContext> ctx_;
    std::unique_ptr<RankSlot[]> slots_;
    std::vector<int64_t> coll_calls_;  // [rank * ncolls + c]: calls of c by rank (its thread only)
    std::vector<int64_t> prev_count_;  // [rank * ncolls + c]: count of c's previous call by rank (0: none, or fixed)
    rt::RunState run_;
    int fail_code_ = 0;  // guarded by run_.mu
    // Recovery (guarded by rec_mu_): ranks come to their next call after a failure.
    std::mutex rec_mu_;
    std::condition_variable rec_cv_;
    std::vector<int> rec_here_;  // [rank]: in recover() now
    std::vector<char> seen_;     // [rank]: returned from a call since the failure (its own thread; reset())
    int32_t rec_count_ = 0;      // ranks in recover() now
    uint64_t rec_gen_ = 0;       // recoveries done
    bool dead_ = false;          // a recovery timed out: refuse every call
    std::string dead_why_;
};

}  // namespace lib
}  // namespace collc

#endif  // COLLC_HOST_LIB_HPP
