import CLinux
import Foundation
import VTCore
import VTEncoding

/// `--realtime adaptive`: after each picture handed to the encoder, the controller's
/// measurements, and the change of speed it asks for.
final class SpeedControlStage: RecordingStage {
    private let control: RecordingControl
    private let frameInterval: Double
    /// Says what the recording could not do as asked (no speeds to adapt with).
    private let notice: (String) -> Void
    private var controller: SpeedController?
    private var steps: [String] = []
    /// When the last picture went into the encoder: the end of the time the speeds are
    /// counted over (the drain and the file's finishing come after).
    private var encodingEnded: Int64?

    init(control: RecordingControl, frameInterval: Double, notice: @escaping (String) -> Void) {
        self.control = control
        self.frameInterval = frameInterval
        self.notice = notice
    }

    /// The controller, if the session has speeds to step between, and the session at the
    /// controller's first step.
    func prepared(_ session: any CompressionSession) throws {
        steps = session.speedSteps
        guard steps.count > 1 else {
            let reason = steps.isEmpty ? "\(session.encoderName) cannot change its speed while it runs here"
                : "\(session.encoderName) has nothing faster than \(steps[0])"
            notice("--realtime adaptive: \(reason); frames are dropped at the queue if it falls behind")
            return
        }
        let controller = SpeedController(steps: steps.count, frameInterval: frameInterval,
                                         cores: Self.usableCores(), newEncoderFrom: session.newEncoderFromSpeedStep,
                                         timesDevice: session.timesDevice)
        try session.setSpeedStep(controller.step)
        self.controller = controller
    }

    func submitted(_ submission: RecordingSubmission) throws {
        guard controller != nil else { return }
        let now = MonotonicClock.nanoseconds()
        encodingEnded = now
        // The waits for pictures timed on a device are the timing's, not the encoder's: an
        // untimed picture is coded while the next is uploaded.
        let device = submission.session.takeDeviceTime()
        let observation = SpeedController.Observation(
            now: now, encodeNanoseconds: max(0, now - submission.encodeStarted - (device?.nanoseconds ?? 0)),
            waiting: control.queue.waiting,
            dropped: control.droppedAtQueue, cpuNanoseconds: MonotonicClock.cpuNanoseconds(),
            encoderStarted: submission.framesSubmitted > submission.framesInEncoder
                && !submission.session.speedChangePending,
            deviceNanoseconds: device.map { $0.nanoseconds / Int64($0.pictures) })
        guard let step = controller?.observe(observation) else { return }
        try submission.session.setSpeedStep(step)
    }

    /// The speed the encoder runs at now, for the status line; nil when it does not adapt.
    var current: String? { controller.map { steps[$0.step] } }

    func report(into statistics: inout RecordingStatistics) {
        guard let controller else { return }
        statistics.speed = SpeedStatistics(steps: steps, current: controller.step, changes: controller.changes,
                                           seconds: controller.seconds(until: encodingEnded ?? MonotonicClock.nanoseconds()),
                                           history: controller.history.map { (Double($0.at) / 1e9, $0.step) })
    }

    /// The cores the process may run on (as x264 counts them for its threads), else those online.
    static func usableCores() -> Int {
        let allowed = Int(vt_usable_cores())
        return allowed > 0 ? allowed : max(1, sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}
