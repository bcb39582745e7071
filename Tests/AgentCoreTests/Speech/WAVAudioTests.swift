import AgentTestSupport
import Foundation
import Testing
@testable import AgentCore

/// The WAV reader of voice messages: every common layout converted to 16 kHz mono 16-bit,
/// and every damaged or unsupported file refused with a reason, never a trap.
@Suite(.ownThreads) struct WAVAudioTests {
    /// One second of a 440 Hz tone in `rate`/`channels`/`bits`, converted.
    func converted(rate: Int, channels: Int, bits: Int, tag: Int = 1, extensible: Bool = false) throws -> [Int16] {
        let file = WAVBuilder.file(rate: rate, channels: channels, bits: bits, tag: tag, frames: rate, extensible: extensible) { frame, _ in
            WAVBuilder.tone(frame, rate: rate)
        }
        let wav = try WAVAudio(header: file)
        #expect(abs(wav.duration - 1) < 0.001)
        return wav.samples16k(of: file)
    }

    @Test func sixteenKilohertzMonoSixteenBitIsKeptAsItIs() throws {
        let samples = try converted(rate: 16_000, channels: 1, bits: 16)
        #expect(samples.count == 16_000)
        #expect(samples[40] == Int16((WAVBuilder.tone(40, rate: 16_000) * 32767).rounded()))
    }

    @Test(arguments: [8_000, 22_050, 44_100, 48_000])
    func everyCommonRateIsResampledToSixteenKilohertz(rate: Int) throws {
        let samples = try converted(rate: rate, channels: 1, bits: 16)
        #expect(abs(samples.count - 16_000) <= 1)
        // The tone's level survives: RMS of a 0.5 sine is 0.354 of full scale.
        #expect(abs(WAVAudio.level(samples) - 0.354 * 32767) < 600, "\(WAVAudio.level(samples))")
    }

    @Test(arguments: [(8, 1), (16, 1), (24, 1), (32, 1), (32, 3)])
    func everySampleFormatReadsAsTheSameTone(bits: Int, tag: Int) throws {
        let samples = try converted(rate: 16_000, channels: 1, bits: bits, tag: tag)
        let reference = try converted(rate: 16_000, channels: 1, bits: 16)
        let worst = zip(samples, reference).map { abs(Int($0) - Int($1)) }.max() ?? 0
        // 8-bit keeps 8 bits: within a step of 256.
        #expect(worst <= (bits == 8 ? 300 : 2), "\(bits)-bit tag \(tag): differs by \(worst)")
    }

    @Test func stereoIsAveragedAndExtensibleHeadersAreRead() throws {
        // Left the tone, right silent: the mono mix is half the tone.
        let file = WAVBuilder.file(rate: 48_000, channels: 2, bits: 16, frames: 48_000, extensible: true) { frame, channel in
            channel == 0 ? WAVBuilder.tone(frame, rate: 48_000) : 0
        }
        let samples = try WAVAudio(header: file).samples16k(of: file)
        #expect(abs(samples.count - 16_000) <= 1)
        #expect(abs(WAVAudio.level(samples) - 0.354 * 32767 / 2) < 400)
    }

    @Test func notWAVAndUnsupportedFormatsAreRefusedWithTheirReason() {
        func refusal(_ bytes: [UInt8]) -> SpeechError? {
            do { _ = try WAVAudio(header: bytes); return nil } catch { return error }
        }
        #expect(refusal([])?.code == .notWAV)
        #expect(refusal(Array("hello, this is not audio at all".utf8))?.message.contains("found \"hell\"") == true)
        #expect(refusal(Array("ID3\u{3}\0\0\0\0\0\0\0\0\0\0".utf8))?.code == .notWAV)
        let data = [UInt8](repeating: 0x10, count: 64)
        #expect(refusal(WAVBuilder.wrap(data: data, rate: 8_000, channels: 1, bits: 8, tag: 7))?.message.contains("µ-law") == true)
        #expect(refusal(WAVBuilder.wrap(data: data, rate: 4_000, channels: 1, bits: 16))?.message.contains("4000 Hz") == true)
        #expect(refusal(WAVBuilder.wrap(data: data, rate: 16_000, channels: 0, bits: 16))?.message.contains("0 channels") == true)
        #expect(refusal(WAVBuilder.wrap(data: data, rate: 16_000, channels: 1, bits: 12))?.code == .unsupported)
        #expect(refusal(WAVBuilder.wrap(data: data, rate: 16_000, channels: 2, bits: 16, align: 3))?.message.contains("block align is 3") == true)
        #expect(refusal(WAVBuilder.wrap(data: [], rate: 16_000, channels: 1, bits: 16))?.code == .silence)
    }

    @Test func damagedHeadersAreRefusedAtEveryLengthAndNeverTrap() throws {
        let file = WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 100) { frame, _ in WAVBuilder.tone(frame, rate: 16_000) }
        let dataStart = file.count - 200
        // Cut anywhere in the headers: a reason, never a trap; cut in the data: what is there.
        for length in 0..<dataStart {
            #expect(throws: SpeechError.self) { try WAVAudio(header: Array(file.prefix(length))) }
        }
        let cut = try WAVAudio(header: Array(file.prefix(dataStart + 51)))
        #expect(cut.data.count == 50, "a cut frame is dropped")
        // A data chunk that declares 4 GiB: the bytes that are there.
        var huge = file
        huge.replaceSubrange((dataStart - 4)..<dataStart, with: [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try WAVAudio(header: huge).data.count == 200)
        // A chunk before the data that declares more than the file: no data chunk is found.
        var skip = file
        let list = skip.indices.first { Array(skip[$0..<min($0 + 4, skip.count)]) == Array("LIST".utf8) }!
        skip.replaceSubrange((list + 4)..<(list + 8), with: [0xF0, 0xFF, 0xFF, 0x7F])
        #expect(throws: SpeechError(.corrupt, "the WAV file has no \"data\" chunk (it is cut short or damaged)")) { try WAVAudio(header: skip) }
    }

    @Test func randomDamageIsRefusedOrReadButNeverTraps() {
        let file = WAVBuilder.file(rate: 44_100, channels: 2, bits: 24, frames: 300) { frame, _ in WAVBuilder.tone(frame, rate: 44_100) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<3_000 {
            var damaged = file
            for _ in 0..<Int.random(in: 1...6, using: &generator) {
                damaged[Int.random(in: 0..<80, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { damaged = Array(damaged.prefix(Int.random(in: 0...damaged.count, using: &generator))) }
            if let wav = try? WAVAudio(header: damaged) {
                _ = wav.samples16k(of: damaged)
            }
        }
    }

    @Test func nonFiniteFloatSamplesAreSilence() throws {
        var data: [UInt8] = []
        for value in [Float.nan, .infinity, -.infinity, 0.5] { WAVBuilder.append(&data, value.bitPattern, 4) }
        let file = WAVBuilder.wrap(data: data, rate: 16_000, channels: 1, bits: 32, tag: 3)
        #expect(try WAVAudio(header: file).samples16k(of: file) == [0, 0, 0, 16384])
    }

    @Test func theLimitsAreCheckedBeforeTheSamplesAreDecoded() {
        var settings = VoiceSettings()
        settings.maximumSeconds = 1
        let long = WAVBuilder.file(rate: 8_000, channels: 1, bits: 8, frames: 16_000) { frame, _ in WAVBuilder.tone(frame, rate: 8_000) }
        #expect(throws: SpeechError(.tooLarge, "the recording is 2.0 s long; the chatbot takes at most 1 s (its voice.max_seconds)")) {
            try VoiceMessages.samples(of: long, settings: settings)
        }
        settings.maximumBytes = 1_000
        #expect(throws: SpeechError(.tooLarge, "the recording is \(long.count) bytes; the chatbot takes at most 1000 (its voice.max_bytes)")) {
            try VoiceMessages.samples(of: long, settings: settings)
        }
        let silent = WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 8_000) { _, _ in 0.0001 }
        let error = #expect(throws: SpeechError.self) { try VoiceMessages.samples(of: silent, settings: VoiceSettings()) }
        #expect(error?.code == .silence)
    }

    @Test func aSpokenAnswerIsAWAVFileTheReaderTakes() throws {
        let samples: [Int16] = (0..<22_050).map { Int16((WAVBuilder.tone($0, rate: 22_050) * 32767).rounded()) }
        let file = WAVAudio.file(samples: samples, rate: 22_050)
        let wav = try WAVAudio(header: file)
        #expect(wav.sampleRate == 22_050 && wav.channels == 1 && wav.encoding == .integer(bits: 16))
        #expect(wav.data.count == samples.count * 2)
    }
}
