import Foundation

/// A WAV recording read from untrusted bytes (an upload): its format from the header, then its
/// samples converted to what the recogniser takes — 16 kHz, mono, 16-bit signed.
///
/// Reading never traps on what the bytes say: every size is checked against what is there
/// (a header may declare gigabytes), chunks are walked forward only (no loop), and the
/// duration is known from the header before any sample is decoded, so that a limit is
/// checked first.
struct WAVAudio {
    /// The formats read: PCM integers of 8, 16, 24 or 32 bits, and 32-bit float.
    enum Encoding: Equatable { case integer(bits: Int), float32 }

    var sampleRate: Int
    var channels: Int
    var encoding: Encoding
    /// Bytes per frame (one sample of every channel), from the header's block align.
    var blockAlign: Int
    /// The `data` chunk's bytes within the recording (what is there, not what was declared).
    var data: Range<Int>

    /// Seconds of sound, from the header.
    var duration: Double { Double(data.count / blockAlign) / Double(sampleRate) }

    /// The rates converted; others are refused (a rate from nothing is a damaged header).
    static let sampleRates = 8_000...192_000
    /// At most this many channels (WAVE_FORMAT_EXTENSIBLE allows 18 positions).
    static let maximumChannels = 32

    /// Reads the header of `bytes` (a RIFF/WAVE file).
    init(header bytes: [UInt8]) throws(SpeechError) {
        guard bytes.count >= 12 else {
            throw SpeechError(.notWAV, "the upload is \(bytes.count) bytes: too short to be a WAV file (a RIFF header alone is 12 bytes)")
        }
        guard Self.tag(bytes, 0) == "RIFF", Self.tag(bytes, 8) == "WAVE" else {
            let start = bytes.prefix(4).map { (0x20..<0x7f).contains($0) ? String(UnicodeScalar($0)) : "." }.joined()
            throw SpeechError(.notWAV, "not a WAV file: expected \"RIFF\" … \"WAVE\" at the start, found \"\(start)\"; send a RIFF/WAVE recording (audio/wav)")
        }
        var format: (tag: Int, channels: Int, rate: Int, align: Int, bits: Int)?
        var offset = 12
        // Forward only: each step moves past a chunk's 8-byte header, so the walk ends.
        while offset + 8 <= bytes.count {
            let id = Self.tag(bytes, offset)
            let declared = Self.uint32(bytes, offset + 4)
            let body = offset + 8
            let available = bytes.count - body
            if id == "fmt " {
                guard declared >= 16, available >= 16 else {
                    throw SpeechError(.corrupt, "the WAV file's \"fmt \" chunk is \(min(declared, available)) bytes; it needs at least 16")
                }
                var tag = Self.uint16(bytes, body)
                // WAVE_FORMAT_EXTENSIBLE: the real format is the sub-format GUID's first two bytes.
                if tag == 0xFFFE, declared >= 40, available >= 40 { tag = Self.uint16(bytes, body + 24) }
                format = (tag, Self.uint16(bytes, body + 2), Self.uint32(bytes, body + 4), Self.uint16(bytes, body + 12), Self.uint16(bytes, body + 14))
            } else if id == "data" {
                guard let format else {
                    throw SpeechError(.corrupt, "the WAV file has its \"data\" chunk before a \"fmt \" chunk: the samples' format is unknown")
                }
                // A streamed recording may declare 0 or 0xFFFFFFFF: the data is what is there.
                let length = declared == 0 || declared > available ? available : declared
                (sampleRate, channels, encoding, blockAlign) = try Self.checked(format)
                data = body..<(body + length - length % blockAlign)
                guard !data.isEmpty else { throw SpeechError(.silence, "the WAV file has no samples: its \"data\" chunk is empty") }
                return
            }
            // Chunks are padded to an even size; a size past the end ends the walk.
            guard declared <= available else { break }
            offset = body + declared + (declared & 1)
        }
        throw SpeechError(.corrupt, format == nil
            ? "the WAV file has no \"fmt \" chunk (it is cut short or damaged)"
            : "the WAV file has no \"data\" chunk (it is cut short or damaged)")
    }

    /// The format's fields, checked: what the conversion below reads.
    private static func checked(_ f: (tag: Int, channels: Int, rate: Int, align: Int, bits: Int)) throws(SpeechError) -> (Int, Int, Encoding, Int) {
        let encoding: Encoding
        switch (f.tag, f.bits) {
        case (1, 8), (1, 16), (1, 24), (1, 32): encoding = .integer(bits: f.bits)
        case (3, 32): encoding = .float32
        default:
            let name = [1: "PCM", 3: "IEEE float", 6: "A-law", 7: "µ-law", 0x11: "IMA ADPCM", 0x55: "MP3"][f.tag] ?? "format tag \(f.tag)"
            throw SpeechError(.unsupported, "unsupported WAV encoding: \(name), \(f.bits)-bit; send PCM of 8, 16, 24 or 32 bits or 32-bit float")
        }
        guard (1...maximumChannels).contains(f.channels) else {
            throw SpeechError(.unsupported, "the WAV file declares \(f.channels) channels; expected 1 to \(maximumChannels)")
        }
        guard sampleRates.contains(f.rate) else {
            throw SpeechError(.unsupported, "the WAV file's sample rate is \(f.rate) Hz; expected \(sampleRates.lowerBound) to \(sampleRates.upperBound) Hz (16000 is best)")
        }
        let frame = f.channels * f.bits / 8
        guard f.align == frame else {
            throw SpeechError(.corrupt, "the WAV file's block align is \(f.align) bytes; \(f.channels) channel(s) of \(f.bits) bits take \(frame)")
        }
        return (f.rate, f.channels, encoding, frame)
    }

    /// The samples at 16 kHz, mono, 16-bit: channels averaged, then resampled — a higher rate
    /// by averaging the samples each output sample spans (a box filter: less aliasing than
    /// picking), a lower one by linear interpolation. Speech needs no better: the
    /// recogniser's filters stop at 8 kHz. No intermediate copy of the recording is made.
    func samples16k(of bytes: [UInt8]) -> [Int16] {
        let frames = data.count / blockAlign
        guard frames > 0 else { return [] }
        let width = blockAlign / channels
        let count = sampleRate == 16_000 ? frames : max(1, Int(Double(frames) * 16_000 / Double(sampleRate)))
        let step = Double(sampleRate) / 16_000
        var output = [Int16](repeating: 0, count: count)
        bytes.withUnsafeBytes { raw in
            func mono(_ frame: Int) -> Float {
                let base = data.lowerBound + frame * blockAlign
                var sum: Float = 0
                for channel in 0..<channels { sum += sample(raw, at: base + channel * width) }
                return sum / Float(channels)
            }
            for index in 0..<count {
                let position = Double(index) * step
                let first = min(Int(position), frames - 1)
                var value: Float
                if step > 1 {
                    let last = min(Int(position + step), frames)
                    value = 0
                    for frame in first..<max(first + 1, last) { value += mono(frame) }
                    value /= Float(max(1, last - first))
                } else {
                    let next = min(first + 1, frames - 1)
                    let left = mono(first)
                    value = left + (mono(next) - left) * Float(position - Double(first))
                }
                output[index] = Int16(max(-32768, min(32767, value.rounded())))
            }
        }
        return output
    }

    /// One sample scaled to -32768…32767.
    private func sample(_ raw: UnsafeRawBufferPointer, at offset: Int) -> Float {
        switch encoding {
        case .integer(bits: 8): return (Float(raw[offset]) - 128) * 256
        case .integer(bits: 16): return Float(Int16(bitPattern: UInt16(raw[offset]) | UInt16(raw[offset + 1]) << 8))
        case .integer(bits: 24):
            let value = Int32(bitPattern: UInt32(raw[offset]) << 8 | UInt32(raw[offset + 1]) << 16 | UInt32(raw[offset + 2]) << 24)
            return Float(value >> 8) / 256
        case .integer:
            return Float(Int32(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)) / 65536
        case .float32:
            let value = Float(bitPattern: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian)
            // NaN and infinities (a damaged file) are silence, not a trap in the conversion.
            return value.isFinite ? value * 32767 : 0
        }
    }

    /// The root-mean-square level of `samples` (0…32768): how loud the recording is.
    static func level(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }

    private static func tag(_ bytes: [UInt8], _ offset: Int) -> String {
        String(decoding: bytes[offset..<min(offset + 4, bytes.count)], as: UTF8.self)
    }

    private static func uint16(_ bytes: [UInt8], _ offset: Int) -> Int { Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 }

    private static func uint32(_ bytes: [UInt8], _ offset: Int) -> Int { uint16(bytes, offset) | uint16(bytes, offset + 2) << 16 }
}

extension WAVAudio {
    /// A 16-bit mono PCM WAV file of `samples`.
    static func file(samples: [Int16], rate: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(44 + samples.count * 2)
        func text(_ string: String) { bytes += Array(string.utf8) }
        func uint32(_ value: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: value).littleEndian) { bytes += $0 } }
        func uint16(_ value: Int) { withUnsafeBytes(of: UInt16(truncatingIfNeeded: value).littleEndian) { bytes += $0 } }
        text("RIFF"); uint32(36 + samples.count * 2); text("WAVE")
        text("fmt "); uint32(16); uint16(1); uint16(1); uint32(rate); uint32(rate * 2); uint16(2); uint16(16)
        text("data"); uint32(samples.count * 2)
        for sample in samples { withUnsafeBytes(of: sample.littleEndian) { bytes += $0 } }
        return bytes
    }
}
