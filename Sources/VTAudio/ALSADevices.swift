import CALSA
import Glibc

/// The sound capture devices ALSA knows: sound cards that can capture, and the PCMs its
/// configuration defines with a description (`default`, `pulse`, `pipewire`, …), as
/// `vtrecord devices` lists them.
public enum ALSADevices {
    /// A microphone as `--audio` takes it.
    public struct Microphone: Sendable, Equatable {
        /// What to give `--audio`: a card's id (stable across reboots, unlike its number), or
        /// the PCM's name.
        public var name: String
        public var description: String
        /// The PCM opened for it.
        public var pcm: String
        /// Where the device sits, for a USB one its bus path as a camera's V4L2 `bus_info`
        /// has it ("usb-0000:00:14.0-1"): a webcam's microphone has its camera's.
        public var busInfo: String?
    }

    public static func microphones() -> [Microphone] {
        var found = cards().compactMap { card -> Microphone? in
            guard let pcm = card.capturePCM else { return nil }
            return Microphone(name: card.id, description: card.longName.isEmpty ? card.name : card.longName, pcm: pcm,
                              busInfo: busPath(in: card.longName))
        }
        // The configuration's own PCMs; the per-card entries (hw:CARD=…, plughw:CARD=…) are the
        // cards above.
        for hint in hints() where !hint.name.contains("CARD=") {
            found.append(Microphone(name: hint.name, description: hint.description, pcm: hint.name,
                                    busInfo: busPath(in: hint.description)))
        }
        return found
    }

    /// "usb-0000:00:14.0-1" out of "… at usb-0000:00:14.0-1, high speed".
    static func busPath(in text: String) -> String? {
        guard let start = text.range(of: "usb-") else { return nil }
        let path = text[start.lowerBound...].prefix { !$0.isWhitespace && $0 != "," }
        return path.count > 4 ? String(path) : nil
    }

    /// A sound card: its stable id ("C920"), its names, and its first capture PCM.
    public struct Card: Sendable, Equatable {
        public var index: Int
        public var id: String
        public var name: String
        public var longName: String
        /// `plughw:CARD=id,DEV=n` for its first device that captures; nil when none does.
        public var capturePCM: String?
    }

    public static func cards() -> [Card] {
        var cards: [Card] = []
        var index: Int32 = -1
        while snd_card_next(&index) >= 0 && index >= 0 {
            var control: OpaquePointer?
            guard snd_ctl_open(&control, "hw:\(index)", 0) >= 0, let control else { continue }
            defer { snd_ctl_close(control) }
            var info: OpaquePointer?
            snd_ctl_card_info_malloc(&info)
            defer { snd_ctl_card_info_free(info) }
            guard snd_ctl_card_info(control, info) >= 0 else { continue }
            let id = String(cString: snd_ctl_card_info_get_id(info))
            cards.append(Card(index: Int(index), id: id, name: String(cString: snd_ctl_card_info_get_name(info)),
                              longName: String(cString: snd_ctl_card_info_get_longname(info)),
                              capturePCM: firstCaptureDevice(control).map { "plughw:CARD=\(id),DEV=\($0)" }))
        }
        return cards
    }

    private static func firstCaptureDevice(_ control: OpaquePointer) -> Int32? {
        var pcmInfo: OpaquePointer?
        snd_pcm_info_malloc(&pcmInfo)
        defer { snd_pcm_info_free(pcmInfo) }
        var device: Int32 = -1
        while snd_ctl_pcm_next_device(control, &device) >= 0 && device >= 0 {
            snd_pcm_info_set_device(pcmInfo, UInt32(device))
            snd_pcm_info_set_subdevice(pcmInfo, 0)
            snd_pcm_info_set_stream(pcmInfo, SND_PCM_STREAM_CAPTURE)
            if snd_ctl_pcm_info(control, pcmInfo) >= 0 { return device }
        }
        return nil
    }

    /// A PCM from ALSA's device hints that can capture: its name and description.
    public struct Hint: Sendable, Equatable {
        public var name: String
        public var description: String
    }

    public static func hints() -> [Hint] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) >= 0, let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var found: [Hint] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            func value(_ id: String) -> String? {
                guard let text = snd_device_name_get_hint(hint, id) else { return nil }
                defer { free(text) }
                return String(cString: text)
            }
            // IOID is absent for a device that does both, "Input" for capture only.
            if let direction = value("IOID"), direction != "Input" { continue }
            guard let name = value("NAME"), name != "null" else { continue }
            let description = (value("DESC") ?? "").split(separator: "\n").joined(separator: ", ")
            found.append(Hint(name: name, description: description))
        }
        return found
    }
}
