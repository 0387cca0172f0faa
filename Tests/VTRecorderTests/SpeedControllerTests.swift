import Foundation
import Testing
@testable import VTRecorder

/// The adaptive speed controller on made-up measurements: an encoder whose cost per picture
/// follows its step, on a clock the test moves.
@Suite struct SpeedControllerTests {
    /// 30 fps; two cores.
    static let interval: Int64 = 33_333_333

    /// Runs `seconds` of pictures through `controller`. `cost(step, t)` is the encoder's time per
    /// picture (nanoseconds) at a step and a time; the queue fills when it exceeds the frame
    /// interval and frames are dropped when it is full, as in the pipeline.
    struct Simulation {
        var controller = SpeedController(steps: 6, frameInterval: 1.0 / 30, cores: 2)
        /// The queue's capacity: frames beyond it are dropped.
        var capacity = 24
        var now: Int64 = 0
        var backlog: Int64 = 0
        var dropped = 0
        var cpu: Int64 = 0
        /// (time, dropped so far) whenever a frame was dropped.
        var drops: [Int64] = []

        /// `heldUp(t)`: how long the host keeps the encoder thread from running during the
        /// picture at `t` (another program on the cores); it lengthens the call and lets frames
        /// pile up, but uses no CPU of the process.
        mutating func run(seconds: Double, heldUp: (Int64) -> Int64 = { _ in 0 }, cost: (Int, Int64) -> Int64) {
            let end = now + Int64(seconds * 1e9)
            while now < end {
                let held = heldUp(now)
                let took = cost(controller.step, now) + held
                now += SpeedControllerTests.interval
                // The encoder's work beyond the interval piles up in the queue, in frames.
                backlog = max(0, backlog + took - SpeedControllerTests.interval)
                var waiting = Int(backlog / SpeedControllerTests.interval)
                if waiting > capacity {
                    dropped += waiting - capacity
                    drops.append(now)
                    backlog -= Int64(waiting - capacity) * SpeedControllerTests.interval
                    waiting = capacity
                }
                cpu += took - held
                if let step = controller.observe(.init(now: now, encodeNanoseconds: min(took, 4 * SpeedControllerTests.interval),
                                                       waiting: waiting, dropped: dropped, cpuNanoseconds: cpu,
                                                       encoderStarted: true)) {
                    #expect(step == controller.step)
                }
            }
        }
    }

    /// Step 0 costs 4 intervals; each step faster is 1.6× cheaper.
    static func costly(_ step: Int, _ t: Int64) -> Int64 {
        Int64(Double(4 * interval) / pow(1.6, Double(step)))
    }

    /// Started at --speed, four times too slow, with the pipeline's own queue of four: it jumps
    /// several steps at once, and stops dropping within a second.
    @Test func anOverloadedEncoderStepsFasterWithinASecondAndStopsDropping() {
        var s = Simulation(controller: SpeedController(steps: 6, frameInterval: 1.0 / 30, cores: 2, start: 0), capacity: 4)
        s.run(seconds: 10, cost: Self.costly)
        #expect(!s.drops.isEmpty, "the queue of four overflowed before the first change")
        let lastDrop = s.drops.last ?? 0
        #expect(lastDrop < 1_000_000_000, "dropped until \(Double(lastDrop) / 1e9) s")
        #expect((s.controller.history.first?.step ?? 0) >= 2, "the first change jumped: \(s.controller.history)")
        // 4/1.6^3 = 0.98 of an interval is too slow to hold; 4/1.6^4 = 0.61 holds.
        #expect(s.controller.step == 4)
        #expect(s.controller.changes <= 4, "it settled rather than wandering: \(s.controller.history)")
    }

    @Test func itStepsBackWhenTheLoadGoesAwayAndNotBefore() {
        var s = Simulation()
        // Three times as costly between 2 s and 8 s, as if another job took the machine.
        let busy = { (step: Int, t: Int64) -> Int64 in
            let base = Int64(Double(Self.interval) * 0.3 * pow(1.6, Double(2 - step)))
            return (2_000_000_000..<8_000_000_000).contains(t) ? base * 3 : base
        }
        s.run(seconds: 8, cost: busy)
        let during = s.controller.step
        #expect(during >= 2, "stepped faster under the load")
        s.run(seconds: 20, cost: busy)
        #expect(s.controller.step < during, "stepped back once the load went")
        #expect(s.controller.step <= 1)
        // Nothing towards --speed while the load was on, once it had stepped faster for it.
        let firstDown = s.controller.history.first { $0.at > 2_000_000_000 && $0.step >= during }?.at ?? 0
        let upsUnderLoad = zip(s.controller.history, s.controller.history.dropFirst())
            .filter { $1.step < $0.step && $1.at > firstDown && $1.at < 8_000_000_000 }
        #expect(upsUnderLoad.isEmpty, "\(s.controller.history)")
    }

    /// A host that holds the encoder thread up now and then (another program on the cores:
    /// 150 ms every second and a half, as with two CPU-bound programs beside a recording on
    /// two cores) is not an overload: an encoder that keeps up works off the frames that piled
    /// up meanwhile within a few pictures. It climbs from the fastest step as it does without
    /// the stalls, never steps faster again for one, and drops nothing.
    @Test func anEncoderThreadHeldUpNowAndThenIsNotAnOverload() {
        // 0.3 of an interval at step 2, each step towards 0 1.6 times dearer (0.77 at step 0).
        let cost = { (step: Int, _: Int64) -> Int64 in Int64(Double(Self.interval) * 0.3 * pow(1.6, Double(2 - step))) }
        let stalls = { (t: Int64) -> Int64 in t % 1_500_000_000 < Self.interval ? 150_000_000 : 0 }
        var steady = Simulation()
        steady.run(seconds: 20, cost: cost)
        var held = Simulation()
        held.run(seconds: 20, heldUp: stalls, cost: cost)
        #expect(held.dropped == 0)
        let first = held.controller.history.first
        #expect(first.map { $0.step <= 1 && $0.at == steady.controller.history.first?.at } == true,
                "it climbed as without the stalls: \(held.controller.history) against \(steady.controller.history)")
        let faster = zip(held.controller.history, held.controller.history.dropFirst()).filter { $1.step > $0.step }
        #expect(faster.isEmpty, "it stepped faster for a stall: \(held.controller.history)")
        #expect(held.controller.step <= 1, "\(held.controller.history)")
    }

    @Test func aStepThatCannotBeHeldIsTriedLessOften() {
        var s = Simulation()
        // Step 0 costs 1.2 intervals: too slow, though it looks roomy from step 1 (0.45).
        s.run(seconds: 60) { step, _ in step == 0 ? Self.interval * 12 / 10 : Self.interval * 45 / 100 }
        let triesAtZero = s.controller.history.filter { $0.step == 0 }.map(\.at)
        #expect(triesAtZero.count >= 2 && triesAtZero.count <= 5, "tries of step 0: \(triesAtZero)")
        let gaps = zip(triesAtZero, triesAtZero.dropFirst()).map { $1 - $0 }
        #expect(gaps == gaps.sorted(), "each try waits longer than the one before: \(gaps)")
    }

    /// It starts at the fastest step, and climbs several steps at a time while the load is far
    /// below idle: an encoder with room to spare reaches --speed within seconds.
    @Test func itStartsFastAndClimbsToTheSpeedAskedForWhenThereIsRoom() {
        var s = Simulation()
        #expect(s.controller.step == 5)
        s.run(seconds: 8) { step, _ in Self.interval / 40 * Int64(6 - step) }
        #expect(s.controller.step == 0, "\(s.controller.history)")
        #expect(s.controller.changes < 5, "several steps at a time: \(s.controller.history)")
        #expect(s.dropped == 0)
    }

    /// Towards --speed past the step where the encoder changes (x264's light encoder, without
    /// a lookahead), it needs more room, and goes one step at a time: what the other encoder
    /// costs shows only once it codes, and leaving it again costs a lookahead's pictures.
    @Test func itClimbsPastAChangeOfEncoderOnlyWithMoreRoomAndOneStepAtATime() {
        // 0.45 of an interval at step 4: room for the next step on the same encoder, not across.
        var s = Simulation(controller: SpeedController(steps: 6, frameInterval: 1.0 / 30, cores: 2, newEncoderFrom: 4))
        s.run(seconds: 20) { step, _ in step >= 4 ? Self.interval * 45 / 100 : Self.interval * 2 }
        #expect(s.controller.step == 4 && s.controller.history.allSatisfy { $0.step >= 4 }, "\(s.controller.history)")
        // The same without a change of encoder there climbs.
        var same = Simulation()
        same.run(seconds: 20) { step, _ in step >= 4 ? Self.interval * 45 / 100 : Self.interval * 2 / 10 }
        #expect(same.controller.step < 4, "\(same.controller.history)")
        // Far below idle: several steps at once, but stopping at the change, then one across.
        var t = Simulation(controller: SpeedController(steps: 6, frameInterval: 1.0 / 30, cores: 2, newEncoderFrom: 4))
        t.run(seconds: 12) { step, _ in Self.interval / 40 * Int64(6 - step) }
        #expect(Array(t.controller.history.map(\.step).prefix(2)) == [4, 3], "\(t.controller.history)")
        #expect(t.controller.step == 0 && t.dropped == 0, "\(t.controller.history)")
    }

    /// A hardware encoder keeps two pictures on its device while the next is uploaded: its
    /// calls return at once and it uses next to no CPU until the device falls behind, so only
    /// the device's own time says how close to the interval it is. Steps at 50, 40, 25 and
    /// 12 ms (as the fake VA driver's levels 4 to 7 in the recording test), twice that between
    /// 5 and 9 s; one picture in four timed, two timings in three 3.5 ms late (the encoder
    /// thread woken late by the host, as seen beside two CPU-bound programs). It holds 25 ms (0.75 of the interval), never tries
    /// 40 ms, leaves 25 ms while it costs 50, and comes back after; nothing is dropped.
    @Test func aHardwareEncoderIsJudgedByWhatItsDeviceTakes() {
        let costs: [Int64] = [50, 40, 25, 12].map { $0 * 1_000_000 }
        var controller = SpeedController(steps: 4, frameInterval: 1.0 / 30, cores: 2, timesDevice: true)
        var deviceFree: Int64 = 0
        var cpu: Int64 = 0
        var dropped = 0
        let upload: Int64 = 2_000_000
        for picture in 0..<(18 * 30) {
            let now = Int64(picture) * Self.interval
            let busy = (5_000_000_000..<9_000_000_000).contains(now)
            let cost = costs[controller.step] * (busy ? 2 : 1)
            // The picture starts once the device is free; the call waits only for the one sent two
            // pictures before, and frames wait in the queue for as long as the device is behind.
            let behind = max(0, deviceFree - now - 2 * Self.interval)
            var waiting = Int(behind / Self.interval)
            if waiting > 24 {
                dropped += waiting - 24
                waiting = 24
                deviceFree = now + 26 * Self.interval
            }
            let wait = behind > 0 ? min(cost, max(0, deviceFree + cost - now - 3 * Self.interval)) : 0
            deviceFree = max(deviceFree, now) + cost
            cpu += upload
            let late: Int64 = picture % 12 == 0 ? 0 : 3_500_000
            let timed = picture % 4 == 0 ? cost + late : nil
            if let step = controller.observe(.init(now: now + upload + wait, encodeNanoseconds: upload + wait,
                                                   waiting: waiting, dropped: dropped, cpuNanoseconds: cpu,
                                                   encoderStarted: true, deviceNanoseconds: timed)) {
                #expect(step == controller.step)
            }
        }
        let history = controller.history.map { (at: Double($0.at) / 1e9, step: $0.step) }
        #expect(dropped == 0, "\(history)")
        #expect(history.allSatisfy { $0.step >= 2 }, "it tried a step the device cannot keep up at: \(history)")
        #expect(history.contains { $0.at < 5 && $0.step == 2 }, "it climbed to 25 ms: \(history)")
        #expect(history.contains { $0.at > 5 && $0.at < 6 && $0.step == 3 }, "it left 25 ms once it cost 50: \(history)")
        #expect(history.last.map { $0.at > 9 && $0.step == 2 } == true, "it came back to 25 ms: \(history)")
    }

    /// A hardware encoder at 25 ms a picture (0.75 of the interval) whose calls come in threes,
    /// as the recording test's VA-API session does: one waits about 54 ms for the device while
    /// two frames arrive, the next two return at once, so frames wait 2, 1, 0. The host then
    /// holds the process up for 150 ms, the way the recording test stops it with SIGSTOP:
    /// once while the encoder waits for the device (frames pile up during one call), once
    /// with the camera stopped too (its frames arrive in a burst once it runs again). Neither
    /// is the encoder falling behind: the backlog goes down after, and it keeps its step.
    @Test func aHardwareEncoderNearItsLimitHeldUpByTheHostKeepsItsStep() {
        var controller = SpeedController(steps: 4, frameInterval: 1.0 / 30, cores: 2, timesDevice: true, start: 2)
        var now: Int64 = 0
        var picture = 0
        var changes: [Int] = []
        func observe(after call: Int64, waiting: Int) {
            now += call
            picture += 1
            let timed: Int64? = picture % 4 == 0 ? 25_000_000 : nil
            if let step = controller.observe(.init(now: now, encodeNanoseconds: call, waiting: waiting, dropped: 0,
                                                   cpuNanoseconds: now / 50, encoderStarted: true,
                                                   deviceNanoseconds: timed)) { changes.append(step) }
        }
        func steady(_ rounds: Int) {
            for _ in 0..<rounds {
                observe(after: 54_000_000, waiting: 2)
                observe(after: 50_000, waiting: 1)
                observe(after: 50_000, waiting: 0)
                now += 46_000_000
            }
        }
        for _ in 0..<8 { observe(after: 1_000_000, waiting: 0); now += 32_000_000 }
        steady(60)
        // Held up during a call with frames already waiting: 4, 3, 2 and then 5.
        observe(after: 28_000_000, waiting: 4)
        observe(after: 50_000, waiting: 3)
        observe(after: 50_000, waiting: 2)
        observe(after: 122_000_000, waiting: 5)
        for waiting in [4, 3, 3, 2, 2, 1, 0] { observe(after: 20_000_000, waiting: waiting) }
        steady(30)
        // The camera stopped with it: frames arrive in a burst as the encoder takes them.
        observe(after: 156_000_000, waiting: 0)
        for waiting in [2, 3, 4, 5, 4, 3, 2, 1, 0] { observe(after: 100_000, waiting: waiting) }
        steady(30)
        #expect(changes.isEmpty, "it stepped for the host's stall: \(controller.history)")
        #expect(controller.step == 2)
    }

    /// Nothing is decided before the encoder gives out its first picture.
    @Test func itWaitsForTheEncodersFirstPicture() {
        var controller = SpeedController(steps: 4, frameInterval: 1.0 / 30, cores: 2)
        for n in 0..<90 {
            let now = Int64(n) * Self.interval
            #expect(controller.observe(.init(now: now, encodeNanoseconds: 1000, waiting: 0, dropped: 0,
                                             cpuNanoseconds: now / 100, encoderStarted: false)) == nil)
        }
        #expect(controller.step == 3 && controller.changes == 0)
        // The time before is the first step's.
        #expect(abs(controller.seconds(until: 90 * Self.interval)[3] - 3) < 0.01)
    }

    @Test func theSecondsAtEachStepAddUpToTheRecording() {
        var s = Simulation()
        s.run(seconds: 12, cost: Self.costly)
        let total = s.controller.seconds(until: s.now).reduce(0, +)
        #expect(abs(total - (12 - 1.0 / 30)) < 0.05, "\(total)")
    }
}
