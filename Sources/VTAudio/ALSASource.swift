import CALSA
import Glibc
import Logging
import Synchronization
import VTCore

/// A microphone through ALSA's PCM API (libasound): a hardware device, a card by its name, or
/// any PCM ALSA knows, `default` included, which on PipeWire and PulseAudio desktops goes
/// through their ALSA plugins, so one backend serves all three.
///
/// Capture runs in ALSA's non-blocking mode, waiting in poll(2) on the device's descriptors
/// and the source's interrupt, which `stop` raises. Each chunk is stamped on CLOCK_MONOTONIC, the camera's
/// clock: the device is told to keep monotonic time stamps, and before every read its status
/// gives the time of its latest position and how many frames were waiting then, so the first
/// frame read was taken `avail ÷ rate` before that time. An overrun is recovered (prepared and
/// started again), counted, and shows as a gap in the chunks' times, which the conformer fills.
///
/// Sendable: the device is the audio thread's (and the opener's before it starts, and the
/// closer's after it ends), behind a mutex that is never contended in that use and makes it
/// provable; the counters sit behind another; stopping goes through the interrupt.
public final class ALSASource: AudioSource, Sendable {
    public let format: AudioCaptureFormat
    public var statistics: AudioCaptureStatistics { counters.withLock { $0 } }

    /// The period asked of the device: 10 ms.
    static let periodMicroseconds: UInt32 = 10_000
    /// The buffer asked of the device: 500 ms (arecord's), room for the audio thread to be
    /// late. With 200 ms a busy machine (three builds beside a recording) or a sanitized
    /// build starved it long enough to overrun.
    static let bufferMicroseconds: UInt32 = 500_000
    /// Frames read at most at once.
    static let largestRead = 4096

    /// What `reopen` asks for again.
    private let pcmName: String
    private let sampleFormat: snd_pcm_format_t
    private let logger: Logger
    private let counters = Mutex(AudioCaptureStatistics())
    private let interrupt = SourceInterrupt()
    private let device: Mutex<Device>

    /// The open device and what reading it needs.
    private struct Device {
        var pcm: OpaquePointer?
        /// Where `snd_pcm_status` writes; made once.
        let status: OpaquePointer
        var started = false
        /// An overrun or a reopening lost samples: the next chunk says so.
        var samplesLost = false
        /// The device's poll descriptors, kept between waits.
        var descriptors: [pollfd] = []
    }

    /// Opens `device` (see `resolve`) for capture at `sampleRate` (default 48000 where the
    /// device offers it, else its own) and `channels` (default 2 where offered, else 1).
    public init(device: String, sampleRate: Int?, channels: Int?, logger: Logger) throws(AudioCaptureError) {
        self.logger = logger
        let name = try Self.resolve(device)
        pcmName = name
        var handle: OpaquePointer?
        try Self.check(name, "open", snd_pcm_open(&handle, name, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)) { code, text in
            code == -ENOENT ? .noSuchDevice(name: device, known: ALSADevices.microphones().map(\.name))
                : .cannotOpen(name: name, reason: text)
        }
        guard let handle else { throw .cannotOpen(name: name, reason: "no handle") }
        do throws(AudioCaptureError) {
            let chosen = try Self.configure(handle, name: name, rate: sampleRate, channels: channels, format: nil)
            sampleFormat = chosen.format
            format = AudioCaptureFormat(sampleRate: chosen.rate, channels: chosen.channels,
                                        sampleFormat: Self.sampleFormat(chosen.format), isLive: true, name: name)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        var made: OpaquePointer?
        guard snd_pcm_status_malloc(&made) >= 0, let status = made else {
            snd_pcm_close(handle)
            throw .cannotOpen(name: name, reason: "out of memory")
        }
        self.device = Mutex(Device(pcm: handle, status: status))
    }

    deinit {
        device.withLock { device in
            if let pcm = device.pcm { snd_pcm_close(pcm) }
            snd_pcm_status_free(device.status)
        }
    }

    public func stop() {
        interrupt.trip()
    }

    public func close() {
        device.withLock { device in
            if let pcm = device.pcm { snd_pcm_close(pcm) }
            device.pcm = nil
        }
    }

    public func reopen() throws(AudioCaptureError) {
        try device.withLock { device throws(AudioCaptureError) in try reopen(&device) }
    }

    private func reopen(_ device: inout Device) throws(AudioCaptureError) {
        if let pcm = device.pcm { snd_pcm_close(pcm) }
        device.pcm = nil
        device.started = false
        var handle: OpaquePointer?
        try Self.check(pcmName, "open", snd_pcm_open(&handle, pcmName, SND_PCM_STREAM_CAPTURE, SND_PCM_NONBLOCK)) { _, text in
            .cannotOpen(name: pcmName, reason: text)
        }
        guard let handle else { throw .cannotOpen(name: pcmName, reason: "no handle") }
        do throws(AudioCaptureError) {
            let chosen = try Self.configure(handle, name: pcmName, rate: format.sampleRate, channels: format.channels,
                                            format: sampleFormat)
            guard chosen.rate == format.sampleRate, chosen.channels == format.channels else {
                throw .unsupportedFormat(name: pcmName, detail: "it came back with another rate or channels")
            }
        } catch {
            snd_pcm_close(handle)
            throw error
        }
        device.pcm = handle
        device.samplesLost = true
        counters.withLock { $0.reconnects += 1 }
    }

    public func nextChunk() throws(AudioCaptureError) -> AudioChunk? {
        try device.withLock { device throws(AudioCaptureError) in try nextChunk(&device) }
    }

    private func nextChunk(_ device: inout Device) throws(AudioCaptureError) -> AudioChunk? {
        guard let pcm = device.pcm else { throw .unplugged(name: pcmName) }
        if !device.started {
            try Self.check(pcmName, "start", snd_pcm_start(pcm)) { code, text in Self.failure(code, text, pcmName) }
            device.started = true
        }
        let status = device.status
        while try wait(pcm, &device.descriptors) {
            // Where the device is, and when: the first frame waiting was taken avail ÷ rate ago.
            var state = snd_pcm_status(pcm, status)
            if state < 0 {
                if try recover(pcm, Int(state), &device) { continue }
            }
            let pcmState = snd_pcm_status_get_state(status)
            if pcmState == SND_PCM_STATE_XRUN {
                _ = try recover(pcm, -Int(EPIPE), &device)
                continue
            }
            if pcmState == SND_PCM_STATE_DISCONNECTED { throw lost() }
            var stamp = timespec()
            snd_pcm_status_get_htstamp(status, &stamp)
            let waiting = Int(snd_pcm_status_get_avail(status))
            guard waiting > 0 else { continue }
            let frames = min(waiting, Self.largestRead)
            var data = [UInt8](repeating: 0, count: frames * format.bytesPerFrame)
            let read = data.withUnsafeMutableBytes { snd_pcm_readi(pcm, $0.baseAddress, snd_pcm_uframes_t(frames)) }
            if read < 0 {
                state = Int32(read)
                _ = try recover(pcm, Int(state), &device)
                continue
            }
            guard read > 0 else { continue }
            if read < frames { data.removeLast((frames - Int(read)) * format.bytesPerFrame) }
            let now = Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
            let taken = now - Int64(waiting) * 1_000_000_000 / Int64(format.sampleRate)
            defer { device.samplesLost = false }
            return AudioChunk(data: data, frames: Int(read), time: taken, followsLoss: device.samplesLost)
        }
        return nil
    }

    /// Waits until the device has a period (or a second passed without one: then its state is
    /// worth a look). False once `stop` was called.
    private func wait(_ pcm: OpaquePointer, _ descriptors: inout [pollfd]) throws(AudioCaptureError) -> Bool {
        let count = Int(snd_pcm_poll_descriptors_count(pcm))
        guard count > 0 else { throw .deviceCall(name: pcmName, call: "snd_pcm_poll_descriptors_count", reason: "none") }
        if descriptors.count != count { descriptors = [pollfd](repeating: pollfd(), count: count) }
        let filled = descriptors.withUnsafeMutableBufferPointer { snd_pcm_poll_descriptors(pcm, $0.baseAddress, UInt32(count)) }
        guard filled >= 0 else { throw Self.failure(filled, Self.text(filled), pcmName) }
        while true {
            for index in descriptors.indices { descriptors[index].revents = 0 }
            do {
                guard try interrupt.poll(&descriptors, timeoutMilliseconds: 1000) else { return false }
            } catch {
                throw .deviceCall(name: pcmName, call: "poll", reason: error.reason)
            }
            var events: UInt16 = 0
            let status = descriptors.withUnsafeMutableBufferPointer {
                snd_pcm_poll_descriptors_revents(pcm, $0.baseAddress, UInt32(count), &events)
            }
            guard status >= 0 else { throw Self.failure(status, Self.text(status), pcmName) }
            if events == 0 && descriptors.allSatisfy({ $0.revents == 0 }) { return true }  // a second without a period
            if events & UInt16(POLLERR | POLLHUP | POLLNVAL) != 0 {
                if snd_pcm_state(pcm) == SND_PCM_STATE_DISCONNECTED { throw lost() }
                return true
            }
            if events & UInt16(POLLIN) != 0 { return true }
        }
    }

    /// Recovers from an overrun or a suspend; returns true to read again. A device that went
    /// away throws.
    private func recover(_ pcm: OpaquePointer, _ code: Int, _ device: inout Device) throws(AudioCaptureError) -> Bool {
        switch Int32(-code) {
        case EAGAIN:
            return true
        case EPIPE, ESTRPIPE:
            if code == -Int(EPIPE) { counters.withLock { $0.overruns += 1 } }
            device.samplesLost = true
            let status = snd_pcm_recover(pcm, Int32(code), 1)
            guard status >= 0 else { throw Self.failure(status, Self.text(status), pcmName) }
            try Self.check(pcmName, "start", snd_pcm_start(pcm)) { code, text in Self.failure(code, text, pcmName) }
            return true
        default:
            throw Self.failure(Int32(code), Self.text(Int32(code)), pcmName)
        }
    }

    private func lost() -> AudioCaptureError {
        counters.withLock { $0.disconnects += 1 }
        return .unplugged(name: pcmName)
    }

    private static func failure(_ code: Int32, _ text: String, _ name: String) -> AudioCaptureError {
        switch -code {
        case ENODEV, EBADFD, EIO, ENXIO: .unplugged(name: name)
        default: .deviceCall(name: name, call: "read", reason: text)
        }
    }

    // MARK: - Opening

    /// The PCM `device` names: itself when ALSA knows it (a PCM name, `default`, `hw:1,0`);
    /// else the card whose id or name it is (case-insensitive), as `plughw:CARD=id,DEV=0`;
    /// else the capture device whose description contains it.
    static func resolve(_ device: String) throws(AudioCaptureError) -> String {
        if device.contains(":") || device == "default" || isConfiguredPCM(device) { return device }
        let lowered = device.lowercased()
        for card in ALSADevices.cards() where card.id.lowercased() == lowered || card.name.lowercased() == lowered {
            return card.capturePCM ?? "plughw:CARD=\(card.id),DEV=0"
        }
        let devices = ALSADevices.hints()
        if let match = devices.first(where: { $0.description.lowercased().contains(lowered) }) { return match.name }
        throw .noSuchDevice(name: device, known: ALSADevices.microphones().map(\.name))
    }

    /// Whether ALSA's configuration defines `pcm.NAME`.
    private static func isConfiguredPCM(_ name: String) -> Bool {
        var top: OpaquePointer?
        guard snd_config_update_ref(&top) >= 0, let top else { return false }
        defer { snd_config_unref(top) }
        var node: OpaquePointer?
        return snd_config_search(top, "pcm.\(name)", &node) == 0
    }

    /// Sets hardware and software parameters; returns what the device took.
    private static func configure(_ pcm: OpaquePointer, name: String, rate: Int?, channels: Int?,
                                  format wanted: snd_pcm_format_t?)
        throws(AudioCaptureError) -> (rate: Int, channels: Int, format: snd_pcm_format_t) {
        var made: OpaquePointer?
        snd_pcm_hw_params_malloc(&made)
        guard let hw = made else { throw .cannotOpen(name: name, reason: "out of memory") }
        defer { snd_pcm_hw_params_free(hw) }
        let refuse = { (code: Int32, text: String) -> AudioCaptureError in .unsupportedFormat(name: name, detail: text) }
        try check(name, "snd_pcm_hw_params_any", snd_pcm_hw_params_any(pcm, hw), refuse)
        try check(name, "interleaved access",
                  snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED), refuse)
        let formats = wanted.map { [$0] } ?? [SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_S32_LE, SND_PCM_FORMAT_FLOAT_LE]
        guard let format = formats.first(where: { snd_pcm_hw_params_test_format(pcm, hw, $0) == 0 }) else {
            throw .unsupportedFormat(name: name, detail: "it offers none of 16-bit, 32-bit or float samples")
        }
        try check(name, "sample format", snd_pcm_hw_params_set_format(pcm, hw, format), refuse)

        var minimum: UInt32 = 0, maximum: UInt32 = 0
        snd_pcm_hw_params_get_channels_min(hw, &minimum)
        snd_pcm_hw_params_get_channels_max(hw, &maximum)
        let count = channels ?? (snd_pcm_hw_params_test_channels(pcm, hw, 2) == 0 ? 2 : Int(minimum))
        try check(name, "channels", snd_pcm_hw_params_set_channels(pcm, hw, UInt32(count))) { _, _ in
            .unsupportedFormat(name: name, detail: "\(count) channel(s) asked, it offers \(minimum) to \(maximum)")
        }
        var chosenRate = UInt32(rate ?? 48_000)
        if rate != nil || snd_pcm_hw_params_test_rate(pcm, hw, 48_000, 0) == 0 {
            try check(name, "rate", snd_pcm_hw_params_set_rate(pcm, hw, chosenRate, 0)) { _, _ in
                var low: UInt32 = 0, high: UInt32 = 0, direction: Int32 = 0
                snd_pcm_hw_params_get_rate_min(hw, &low, &direction)
                snd_pcm_hw_params_get_rate_max(hw, &high, &direction)
                return .unsupportedFormat(name: name, detail: "\(chosenRate) Hz asked, it offers \(low) to \(high) Hz")
            }
        } else {
            var direction: Int32 = 0
            try check(name, "rate", snd_pcm_hw_params_set_rate_near(pcm, hw, &chosenRate, &direction), refuse)
        }
        var period = periodMicroseconds, buffer = bufferMicroseconds
        var direction: Int32 = 0
        try check(name, "buffer time", snd_pcm_hw_params_set_buffer_time_near(pcm, hw, &buffer, &direction), refuse)
        try check(name, "period time", snd_pcm_hw_params_set_period_time_near(pcm, hw, &period, &direction), refuse)
        try check(name, "snd_pcm_hw_params", snd_pcm_hw_params(pcm, hw), refuse)

        var software: OpaquePointer?
        snd_pcm_sw_params_malloc(&software)
        guard let sw = software else { throw .cannotOpen(name: name, reason: "out of memory") }
        defer { snd_pcm_sw_params_free(sw) }
        var periodFrames: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_period_size(hw, &periodFrames, &direction)
        let call = { (code: Int32, text: String) -> AudioCaptureError in .deviceCall(name: name, call: "sw params", reason: text) }
        try check(name, "snd_pcm_sw_params_current", snd_pcm_sw_params_current(pcm, sw), call)
        try check(name, "tstamp mode", snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE), call)
        try check(name, "tstamp type",
                  snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC), call)
        try check(name, "avail min", snd_pcm_sw_params_set_avail_min(pcm, sw, periodFrames), call)
        try check(name, "snd_pcm_sw_params", snd_pcm_sw_params(pcm, sw), call)
        try check(name, "prepare", snd_pcm_prepare(pcm), call)
        return (Int(chosenRate), count, format)
    }

    private static func sampleFormat(_ format: snd_pcm_format_t) -> AudioSampleFormat {
        switch format {
        case SND_PCM_FORMAT_S32_LE: .s32
        case SND_PCM_FORMAT_FLOAT_LE: .float32
        default: .s16
        }
    }

    static func text(_ code: Int32) -> String { String(cString: snd_strerror(code)) }

    /// Throws `error(code, text)` when `code` is negative.
    private static func check(_ name: String, _ what: String, _ code: Int32,
                              _ error: (Int32, String) -> AudioCaptureError) throws(AudioCaptureError) {
        guard code < 0 else { return }
        throw error(code, "\(what): \(text(code))")
    }
}
