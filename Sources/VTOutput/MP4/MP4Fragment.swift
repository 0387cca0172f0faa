/// One track's samples in a fragment: what its `traf` says.
struct MP4TrackRun {
    var trackID: UInt32
    var baseDecodeTime: UInt64
    var samples: [MP4Sample]
    /// Every sample is a sync sample shown at its decode time (sound): their flags are given
    /// once and the run lists only durations and sizes.
    var allSync: Bool
    /// Where the run's data starts in the fragment's `mdat` payload.
    var dataOffset: Int
    /// Every sample belongs to the track's one roll-recovery group (sound), which the fragment
    /// says again for its own samples.
    var rollGroup = false
}

extension MP4Boxes {
    /// A `moof` with a track fragment for each of `runs`, whose data follows in an `mdat` right
    /// after it (with an 8-byte header), each run's at its `dataOffset` in that payload.
    static func fragment(sequence: UInt32, runs: [MP4TrackRun]) -> [UInt8] {
        var w = BoxBuilder(reservingCapacity: 128 + runs.reduce(0) { $0 + 64 + $1.samples.count * 16 })
        var dataOffsetFields: [Int] = []
        w.box("moof") { w in
            w.fullBox("mfhd") { w in w.u32(sequence) }
            for run in runs {
                w.box("traf") { w in
                    if run.allSync {
                        // Offsets from the moof; every sample's flags once, in the header.
                        w.fullBox("tfhd", flags: 0x02_0000 | 0x00_0020) { w in
                            w.u32(run.trackID)
                            w.u32(MP4Sample(size: 0, duration: 0, compositionOffset: 0, isKeyFrame: true).flags)
                        }
                    } else {
                        w.fullBox("tfhd", flags: 0x02_0000) { w in w.u32(run.trackID) }  // offsets from the moof
                    }
                    w.fullBox("tfdt", version: 1) { w in w.u64(run.baseDecodeTime) }
                    // data offset, and per sample: duration, size (and flags, composition offset)
                    let perSample: UInt32 = run.allSync ? 0x00_0100 | 0x00_0200 : 0x00_0100 | 0x00_0200 | 0x00_0400 | 0x00_0800
                    w.fullBox("trun", flags: 0x00_0001 | perSample) { w in
                        w.u32(UInt32(run.samples.count))
                        dataOffsetFields.append(w.count)
                        w.u32(0)
                        for sample in run.samples {
                            w.u32(sample.duration)
                            w.u32(sample.size)
                            if !run.allSync {
                                w.u32(sample.flags)
                                w.u32(sample.compositionOffset)
                            }
                        }
                    }
                    if run.rollGroup { rollGroupSamples(&w, count: run.samples.count) }
                }
            }
        }
        for (run, field) in zip(runs, dataOffsetFields) {
            w.patch(u32: UInt32(w.count + 8 + run.dataOffset), at: field)
        }
        return w.bytes
    }
}
