import Foundation

/// `--realtime adaptive`: chooses, frame by frame, which of the session's speed steps a live
/// source's encoder runs at, so that it keeps up without dropping and still spends what the
/// machine can give on quality. Step 0 is `--speed`, the best allowed; higher steps are faster.
///
/// It measures, after each picture handed to the encoder:
/// - the pressure on the queue: frames waiting in it, and frames dropped at it (a full queue);
/// - the encoder's time per picture: how long the encode call took (including writing what
///   came out), smoothed, as a fraction of the frame interval. An encoder that keeps up
///   returns within the interval; one that falls behind blocks for longer;
/// - the CPU the process uses, as a fraction of the cores online, over half-second windows. A
///   frame-threaded encoder (x264) returns quickly until every core is busy, so its call time
///   alone shows too little headroom;
/// - for a hardware encoder (`CompressionSession.timesDevice`), the device's time per picture,
///   the least of its last few timings, as a fraction of the frame interval. It uses little CPU, and its calls return
///   quickly while the pictures it keeps in flight are coded, until the device falls behind:
///   neither shows how close to the interval the device is.
/// The load is the largest of these.
///
/// It starts at the fastest step and judges nothing until the encoder has given out its first
/// picture. It steps faster when frames were dropped, when frames wait and their number grows
/// over a few pictures (a backlog the encoder is not working off, not one the host left by
/// holding the encoder thread up for a moment), or when the load passes `busy`: by more than
/// one step when the load says one would not be enough, or straight back to the step it came
/// from when a step towards `--speed` did not hold. Then it waits for the change to show
/// (pictures already in the encoder keep their settings) before judging again.
/// It steps towards `--speed` after `calm` of steady headroom (load under `idle`, nothing
/// pressing), several steps at once while the load is far below `idle`; a step it had to leave
/// again soon after taking it waits twice as long before the next try, so it does not go back
/// and forth.
///
/// Owned by the encoder thread.
struct SpeedController {
    /// What is measured after each picture.
    struct Observation {
        /// CLOCK_MONOTONIC nanoseconds after the encode call returned.
        var now: Int64
        /// How long the encode call took.
        var encodeNanoseconds: Int64
        /// Frames waiting in the queue.
        var waiting: Int
        /// Frames dropped at the queue so far.
        var dropped: Int
        /// The process's CPU time so far.
        var cpuNanoseconds: Int64
        /// Whether the encoder has given out a picture yet, and since a change that opened a
        /// new one (`CompressionSession.speedChangePending`): until then (x264 filling its
        /// lookahead) what it costs says nothing of what coding will cost.
        var encoderStarted: Bool
        /// The device's time per picture over the pictures it timed since the last observation,
        /// for a session that times its device.
        var deviceNanoseconds: Int64? = nil
    }

    /// Load (a fraction of the frame interval, or of the cores) above which the encoder steps
    /// faster even with an empty queue: room for a keyframe or a scene change.
    static let busy = 0.85
    /// Load under which there is room for the next slower step (each is 1.4–2× the cost of
    /// the one after it).
    static let idle = 0.5
    /// Steady headroom before the first try of a slower step; doubled for a step that had to
    /// be left within `tooSoon` of taking it, up to `longestCalm`.
    static let calm: Int64 = 2_000_000_000
    static let longestCalm: Int64 = 60_000_000_000
    static let tooSoon: Int64 = 10_000_000_000
    /// Frames waiting in the queue that mean the encoder may be behind (one may wait for a
    /// moment while the encoder finishes a picture).
    static let backlog = 2
    /// Pictures over which a backlog must last, and grow, before it counts as the encoder
    /// falling behind. The host holds the encoder thread or the camera up now and then (another
    /// program on the cores: 100–200 ms at a time with two CPU-bound ones beside a recording
    /// on two cores); an encoder that keeps up works the frames that piled up meanwhile off
    /// within a few pictures, so they say nothing of its speed. Dropped frames count at once,
    /// and the queue (`PipelineDepth.adaptiveQueue`) holds most of a second.
    static let lastingBacklog = 4
    /// The most one picture's call counts for in the smoothed load, in frame intervals: a
    /// call the host held up for several intervals does not alone make an overload, while
    /// calls that stay long lift the load past `busy` within a few pictures.
    static let longestCall = 2.0
    /// How often the CPU share is measured.
    static let window: Int64 = 500_000_000
    /// Frame intervals to wait after a change before judging it: the pictures in the encoder
    /// were started at the old settings.
    static let settleFrames = 6.0

    /// The share of `idle` the load must be under to step from `newEncoderFrom` to the step
    /// before it: that step also brings back x264's lookahead (about a quarter more work at
    /// superfast's analysis, and fewer pictures coded at once), and leaving it again empties
    /// a lookahead's worth of pictures while the light encoder starts.
    static let acrossEncoders = 0.8

    let steps: Int
    let frameInterval: Double
    let cores: Int
    /// The first step coded by another encoder (`CompressionSession.newEncoderFromSpeedStep`).
    let newEncoderFrom: Int?
    /// The session times its device (`CompressionSession.timesDevice`): a step counts as roomy
    /// only once the device's time was measured at it.
    let timesDevice: Bool

    private(set) var step: Int
    private(set) var changes = 0
    /// Nanoseconds spent at each step.
    private(set) var nanosecondsAt: [Int64]
    /// Each change: nanoseconds since the first picture, and the step taken (the first
    /// `historyLimit` of them).
    private(set) var history: [(at: Int64, step: Int)] = []
    static let historyLimit = 1000

    private var started = false
    private var firstPicture: Int64 = 0
    private var lastChange: Int64 = 0
    /// The step the current one was reached from by stepping towards `--speed`: one known to
    /// keep up, where the encoder goes back to if this one does not.
    private var cameFrom: Int?
    /// nil until measured at the current step.
    private var callLoad: Double?
    /// The device's last times per picture, as fractions of the frame interval, oldest first.
    private var deviceTimes: [Double] = []
    /// How many of the device's times count. A session times about one picture in four, so
    /// three span about as many pictures as the call time's memory.
    static let deviceMemory = 3
    /// The least of `deviceTimes`; nil until measured at the current step. The host can only
    /// lengthen a timing, never shorten it: a timing ends when the encoder thread runs again
    /// after the device is done, which with other programs on the cores is often 3–4 ms
    /// (a tenth of a frame interval at 30 fps) after. A device that slows down lengthens every
    /// timing, and shows within three.
    private var deviceLoad: Double? { deviceTimes.min() }
    private var windowStart: Int64?
    private var windowCPU: Int64 = 0
    private var cpuLoad = 0.0
    private var lastDropped = 0
    /// Frames waiting at the last `lastingBacklog` pictures, and when, oldest first.
    private var recentWaiting: [(waiting: Int, at: Int64)] = []
    /// Since when there has been headroom (nil: not now).
    private var calmSince: Int64?
    /// The headroom each step needs before it is tried again.
    private var calmNeeded: [Int64]

    /// Starts at the fastest step: what an encoder will cost is known only once it codes, and
    /// x264 shows it only after its lookahead (up to two seconds); a recording that starts
    /// too slow drops frames from its first seconds, one that starts fast climbs to
    /// `--speed` within seconds (several steps at a time while the load is far below `idle`).
    /// `start`: another first step than the fastest.
    init(steps: Int, frameInterval: Double, cores: Int, newEncoderFrom: Int? = nil, timesDevice: Bool = false,
         start: Int? = nil) {
        precondition(steps > 1)
        self.steps = steps
        self.newEncoderFrom = newEncoderFrom
        self.timesDevice = timesDevice
        step = start ?? steps - 1
        self.frameInterval = frameInterval
        self.cores = max(1, cores)
        nanosecondsAt = Array(repeating: 0, count: steps)
        calmNeeded = Array(repeating: Self.calm, count: steps)
    }

    /// The largest of the loads.
    var load: Double { max(callLoad ?? 0, cpuLoad, deviceLoad ?? 0) }

    /// Takes one picture's measurements; returns the step to change to, if any.
    mutating func observe(_ o: Observation) -> Int? {
        if !started {
            started = true
            lastChange = o.now
            firstPicture = o.now
        }
        let interval = frameInterval * 1e9
        let droppedNow = o.dropped > lastDropped
        lastDropped = o.dropped
        guard o.encoderStarted else {
            // Counted at the first step; judged from the first picture out.
            nanosecondsAt[step] += o.now - lastChange
            lastChange = o.now
            return nil
        }
        // About eight pictures of memory: one slow picture (a keyframe, or a call the host held
        // up) is not a trend; a sudden overload shows in the queue too.
        let callFraction = min(Double(o.encodeNanoseconds) / interval, Self.longestCall)
        callLoad = callLoad.map { $0 + (callFraction - $0) / 8 } ?? callFraction
        if let device = o.deviceNanoseconds {
            deviceTimes.append(Double(device) / interval)
            if deviceTimes.count > Self.deviceMemory { deviceTimes.removeFirst() }
        }
        measureCPU(o)
        recentWaiting.append((o.waiting, o.now))
        if recentWaiting.count > Self.lastingBacklog { recentWaiting.removeFirst() }
        // A backlog the encoder falls behind on: it lasted, grew at more than one picture, is
        // at its peak (not being worked off), and the encoder took longer per picture than the
        // camera's interval meanwhile. A host that holds the process up leaves a backlog that
        // rises at one picture (the call it held up) or in a burst of frames faster than any
        // encoder takes them (the capture thread catching up), and then goes down.
        let rises = zip(recentWaiting, recentWaiting.dropFirst()).count { $1.waiting > $0.waiting }
        let growingBacklog = recentWaiting.count == Self.lastingBacklog
            && recentWaiting.allSatisfy { $0.waiting >= Self.backlog }
            && o.waiting > recentWaiting[0].waiting && recentWaiting.allSatisfy { $0.waiting <= o.waiting }
            && rises >= 2
            && Double(o.now - recentWaiting[0].at) >= Double(Self.lastingBacklog - 1) * interval

        let pressed = droppedNow || growingBacklog || load > Self.busy
        let settled = Double(o.now - lastChange) >= Self.settleFrames * interval
        if pressed {
            calmSince = nil
            guard settled, step < steps - 1 else { return nil }
            if let back = cameFrom, o.now - lastChange < Self.tooSoon {
                // A step up that did not hold: back to where it was held.
                return change(to: back, at: o.now)
            }
            // Each step faster is about 1.5× cheaper: enough steps to bring the load under
            // busy. A picture that took several intervals shows an overload the smoothed
            // load has not caught up with yet.
            let overload = max(load, Double(o.encodeNanoseconds) / interval)
            let needed = overload > Self.busy ? Int((log(overload / Self.busy) / log(1.5)).rounded(.up)) : 1
            return change(to: min(steps - 1, step + max(1, needed)), at: o.now)
        }
        // (Frames may wait for a moment; a backlog was pressure above only if it lasted and grew.)
        // The CPU share (and the device's time) is measured at this step at least once before it
        // counts as room.
        let acrossEncoders = step == newEncoderFrom
        let roomy = load < Self.idle * (acrossEncoders ? Self.acrossEncoders : 1) && cpuLoad > 0
            && (!timesDevice || deviceLoad != nil)
        guard roomy, step > 0 else {
            calmSince = nil
            return nil
        }
        let since = calmSince ?? o.now
        calmSince = since
        guard o.now - since >= calmNeeded[step - 1], settled else { return nil }
        // Far below idle, several steps at once (each about 1.5× dearer), but only into steps
        // never left for being too slow: one of those is tried alone; and not on past a change
        // of encoder, whose cost shows only once the new one codes.
        var next = step - 1
        let room = Int(log(Self.idle / max(load, 0.01)) / log(1.5))
        while !acrossEncoders, next > 0, next != newEncoderFrom, step - next < room,
              calmNeeded[next] == Self.calm, calmNeeded[next - 1] == Self.calm { next -= 1 }
        return change(to: next, at: o.now)
    }

    private mutating func change(to next: Int, at now: Int64) -> Int {
        if next > step, cameFrom != nil, now - lastChange < Self.tooSoon {
            // The step just tried could not be held: try it again later than last time.
            calmNeeded[step] = min(Self.longestCalm, calmNeeded[step] * 2)
        }
        nanosecondsAt[step] += max(0, now - lastChange)
        cameFrom = next < step ? step : nil
        step = next
        changes += 1
        if history.count < Self.historyLimit { history.append((now - firstPicture, next)) }
        lastChange = now
        calmSince = nil
        // The new step's cost is not known yet: judge it afresh.
        callLoad = nil
        deviceTimes = []
        cpuLoad = 0
        windowStart = nil
        return next
    }

    private mutating func measureCPU(_ o: Observation) {
        guard let start = windowStart else {
            windowStart = o.now
            windowCPU = o.cpuNanoseconds
            return
        }
        let elapsed = o.now - start
        guard elapsed >= Self.window else { return }
        cpuLoad = Double(o.cpuNanoseconds - windowCPU) / Double(elapsed) / Double(cores)
        windowStart = o.now
        windowCPU = o.cpuNanoseconds
    }

    /// Seconds at each step up to `now`.
    func seconds(until now: Int64) -> [Double] {
        var totals = nanosecondsAt
        if started { totals[step] += max(0, now - lastChange) }
        return totals.map { Double($0) / 1e9 }
    }
}
