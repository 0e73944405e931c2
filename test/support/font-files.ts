/**
 * What the shipped font files call themselves, read from their own `name` tables, so tests can
 * tell a bundled font from anything else that might end up in a PDF; and a sample of real text in
 * every script the service promises to print.
 */
import { readFileSync } from 'node:fs';
import { BUNDLED_FONTS, bundledFontFiles } from '#lib/render/fonts.ts';

/** The PostScript name (name ID 6) of a TrueType/OpenType file, e.g. "NotoSans-Regular". */
export function postscriptName(path: string): string {
  const font = readFileSync(path);
  const tables = font.readUInt16BE(4);
  for (let i = 0; i < tables; i++) {
    const record = 12 + 16 * i;
    if (font.toString('latin1', record, record + 4) !== 'name') continue;
    const table = font.readUInt32BE(record + 8);
    const count = font.readUInt16BE(table + 2);
    const strings = table + font.readUInt16BE(table + 4);
    for (let j = 0; j < count; j++) {
      const entry = table + 6 + 12 * j;
      const [platform, , , nameId, length, offset] = [0, 2, 4, 6, 8, 10].map((at) => font.readUInt16BE(entry + at)) as [
        number, number, number, number, number, number,
      ];
      if (nameId !== 6) continue;
      const raw = font.subarray(strings + offset, strings + offset + length);
      // Windows and Unicode platforms store UTF-16BE, Macintosh a single-byte encoding.
      return platform === 1 ? raw.toString('latin1') : Buffer.from(raw).swap16().toString('utf16le');
    }
  }
  throw new Error(`${path} has no PostScript name`);
}

/** PostScript names of every font the service ships. */
export const SHIPPED_FONT_NAMES: ReadonlySet<string> = new Set(bundledFontFiles().map(postscriptName));

const regularFaces = new Map<string, { readonly path: string; readonly name: string }>();

/** The regular face of a bundled family: its file and its PostScript name (what a PDF embeds). */
export function regularFace(family: string): { readonly path: string; readonly name: string } {
  let face = regularFaces.get(family);
  if (!face) {
    const index = BUNDLED_FONTS.findIndex((font) => font.family === family && font.file.startsWith('400Regular/'));
    if (index < 0) throw new Error(`${family} has no bundled regular face`);
    const path = bundledFontFiles()[index]!;
    face = { path, name: postscriptName(path) };
    regularFaces.set(family, face);
  }
  return face;
}

/** Real text in one language, and the bundled families that must draw its letters. */
export interface ScriptSample {
  /** The script, and the language where the script serves several. */
  readonly script: string;
  /** The BCP 47 tag a document gives it (`lang`). */
  readonly lang: string;
  /** Families that may draw its letters (the first one is the script's own). */
  readonly fonts: readonly string[];
  readonly rtl?: boolean;
  /** Families that may draw some of its punctuation, where its own family lacks a mark it uses. */
  readonly punctuationFrom?: readonly string[];
  /**
   * The tests' PDF reader (test/support/pdf-text.ts) puts a right-to-left line in logical order
   * approximately; it gets this one's characters but not their order (apostrophes inside words).
   */
  readonly readBackUnordered?: true;
  readonly text: string;
}

/**
 * Article 1 of the Universal Declaration of Human Rights ("All human beings are born free and
 * equal in dignity and rights..."), as published by the UN human rights office, in one language of
 * every script the service promises. Texts from the "UDHR in Unicode" project, except N'Ko, Ol
 * Chiki, Meetei Mayek and Odia, which it lacks in full (from Google Fonts' language samples, the
 * same article). Devanagari is also in Noto Sans itself, which may draw it.
 */
export const SCRIPT_SAMPLES: readonly ScriptSample[] = [
  { script: 'Latin (Polish)', lang: 'pl', fonts: ['Noto Sans'],
    text: 'Wszyscy ludzie rodzą się wolni i równi pod względem swej godności i swych praw. Są oni obdarzeni rozumem i sumieniem i powinni postępować wobec innych w duchu braterstwa.' },
  { script: 'Greek', lang: 'el', fonts: ['Noto Sans'],
    text: 'Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης.' },
  { script: 'Cyrillic (Russian)', lang: 'ru', fonts: ['Noto Sans'],
    text: 'Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью и должны поступать в отношении друг друга в духе братства.' },
  { script: 'Arabic', lang: 'ar', fonts: ['Noto Sans Arabic'], rtl: true,
    text: 'يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق. وقد وهبوا عقلاً وضميرًا وعليهم أن يعامل بعضهم بعضًا بروح الإخاء.' },
  { script: 'Arabic (Urdu)', lang: 'ur', fonts: ['Noto Sans Arabic'], rtl: true,
    text: 'تمام انسان آزاد اور حقوق و عزت کے اعتبار سے برابر پیدا ہوئے ہیں۔ انہیں ضمیر اور عقل ودیعت ہوئی ہے۔ اس لئے انہیں ایک دوسرے کے ساتھ بھائی چارے کا سلوک کرنا چاہیئے۔' },
  { script: 'Arabic (Persian)', lang: 'fa', fonts: ['Noto Sans Arabic'], rtl: true,
    text: 'تمام افراد بشر آزاد بدنیا میایند و از لحاظ حیثیت و حقوق با هم برابرند. همه دارای عقل و وجدان میباشند و باید نسبت بیکدیگر با روح برادری رفتار کنند.' },
  { script: 'Hebrew', lang: 'he', fonts: ['Noto Sans Hebrew'], rtl: true,
    text: 'כל בני אדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה עליהם לנהוג איש ברעהו ברוח של אחוה.' },
  { script: 'Devanagari (Hindi)', lang: 'hi', fonts: ['Noto Sans Devanagari', 'Noto Sans'],
    text: 'सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है । उन्हें बुद्धि और अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए ।' },
  { script: 'Bengali', lang: 'bn', fonts: ['Noto Sans Bengali'],
    text: 'সমস্ত মানুষ স্বাধীনভাবে সমান মর্যাদা এবং অধিকার নিয়ে জন্মগ্রহণ করে। তাঁদের বিবেক এবং বুদ্ধি আছে; সুতরাং সকলেরই একে অপরের প্রতি ভ্রাতৃত্বসুলভ মনোভাব নিয়ে আচরণ করা উচিত।' },
  { script: 'Gurmukhi (Punjabi)', lang: 'pa', fonts: ['Noto Sans Gurmukhi'],
    text: 'ਸਾਰਾ ਮਨੁੱਖੀ ਪਰਿਵਾਰ ਆਪਣੀ ਮਹਿਮਾ, ਸ਼ਾਨ ਅਤੇ ਹੱਕਾਂ ਦੇ ਪੱਖੋਂ ਜਨਮ ਤੋਂ ਹੀ ਆਜ਼ਾਦ ਹੈ ਅਤੇ ਸੁਤੇ ਸਿੱਧ ਸਾਰੇ ਲੋਕ ਬਰਾਬਰ ਹਨ । ਉਨ੍ਹਾਂ ਸਭਨਾ ਨੂੰ ਤਰਕ ਅਤੇ ਜ਼ਮੀਰ ਦੀ ਸੌਗਾਤ ਮਿਲੀ ਹੋਈ ਹੈ ਅਤੇ ਉਨ੍ਹਾਂ ਨੂੰ ਭਰਾਤਰੀਭਾਵ ਦੀ ਭਾਵਨਾ ਰਖਦਿਆਂ ਆਪਸ ਵਿਚ ਵਿਚਰਣਾ ਚਾਹੀਦਾ ਹੈ ।' },
  { script: 'Gujarati', lang: 'gu', fonts: ['Noto Sans Gujarati'],
    text: 'પ્રતિષ્ઠા અને અધિકારોની દૃષ્ટિએ સર્વ માનવો જન્મથી સ્વતંત્ર અને સમાન હોય છે. તેમનામાં વિચારશક્તિ અને અંતઃકરણ હોય છે અને તેમણે પરસ્પર બંધુત્વની ભાવનાથી વર્તવું જોઇએ.' },
  { script: 'Odia', lang: 'or', fonts: ['Noto Sans Oriya'],
    text: 'ସବୁ ମନୁଷ୍ୟ ଜନ୍ମକାଳରୁ ସ୍ୱାଧୀନ. ସେମାନଙ୍କର ମର୍ଯ୍ୟାଦା ଓ ଅଧିକାର ସମାନ. ସେମାନଙ୍କଠାରେ ପ୍ରଜ୍ଞା ଓ ବିବେକ ନିହିତ ଅଛି. ସେମାନେ ପରସ୍ପର ପ୍ରତି ଭାତୃଭାବ ପୋଷଣ କରି କାର୍ଯ୍ୟ କରିବା ଦରକାର.' },
  { script: 'Tamil', lang: 'ta', fonts: ['Noto Sans Tamil'],
    text: 'மனிதப் பிறிவியினர் சகலரும் சுதந்திரமாகவே பிறக்கின்றனர்; அவர்கள் மதிப்பிலும், உரிமைகளிலும் சமமானவர்கள், அவர்கள் நியாயத்தையும் மனச்சாட்சியையும் இயற்பண்பாகப் பெற்றவர்கள். அவர்கள் ஒருவருடனொருவர் சகோதர உணர்வுப் பாங்கில் நடந்துகொள்ளல் வேண்டும்.' },
  { script: 'Telugu', lang: 'te', fonts: ['Noto Sans Telugu'],
    text: 'ప్రతిపత్తిస్వత్వముల విషయమున మానవులెల్లరును జన్మతః స్వతంత్రులును సమానులును నగుదురు. వారు వివేచన-అంతఃకరణ సంపన్నులగుటచే పరస్పరము భ్రాతృభావముతో వర్తింపవలయును.' },
  { script: 'Kannada', lang: 'kn', fonts: ['Noto Sans Kannada'],
    text: 'ಎಲ್ಲಾ ಮಾನವರೂ ಸ್ವತಂತ್ರರಾಗಿಯೇ ಜನಿಸಿದ್ದಾರೆ. ಹಾಗೂ ಘನತೆ ಮತ್ತು ಹಕ್ಕುಗಳಲ್ಲಿ ಸಮಾನರಾಗಿದ್ದಾರೆ. ವಿವೇಕ ಮತ್ತು ಅಂತಃಕರಣಗಳನ್ನು ಪಡೆದವರಾದ್ದರಿಂದ ಅವರು ಪರಸ್ಪರ ಸಹೋದರ ಭಾವದಿಂದ ವರ್ತಿಸಬೇಕು.' },
  { script: 'Malayalam', lang: 'ml', fonts: ['Noto Sans Malayalam'],
    text: 'മനുഷ്യരെല്ലാവരും തുല്യാവകാശങ്ങളോടും അന്തസ്സോടും സ്വാതന്ത്ര്യത്തോടുംകൂടി ജനിച്ചിട്ടുള്ളവരാണ്\u200C. അന്യോന്യം ഭ്രാതൃഭാവത്തോടെ പെരുമാറുവാനാണ്\u200C മനുഷ്യന്നു വിവേകബുദ്ധിയും മനസ്സാക്ഷിയും സിദ്ധമായിരിക്കുന്നത്\u200C.' },
  { script: 'Sinhala', lang: 'si', fonts: ['Noto Sans Sinhala'],
    text: 'සියලු මනුෂ්\u200Dයයෝ නිදහස්ව උපත ලබා ඇත. ගරුත්වයෙන් හා අයිතිවාසිකම්වලින් සමාන වෙති. යුක්ති අයුක්ති පිළිබඳ හැඟීමෙන් හා හෘදය සාක්ෂියෙන් යුත් ඔවුන්, ඔවුනොවුන්ට සැළකිය යුත්තේ සහෝදරත්වය පිළිබඳ හැඟීමෙනි.' },
  { script: 'Thai', lang: 'th', fonts: ['Noto Sans Thai'],
    text: 'มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ ต่างมีเหตุผลและมโนธรรม และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ' },
  { script: 'Lao', lang: 'lo', fonts: ['Noto Sans Lao'],
    text: 'ມະນຸດເກີດມາມີສິດເສລີພາບ ແລະ ສະເໝີໜ້າກັນໃນທາງກຽດຕິສັກ ແລະ ທາງສິດດ້ວຍມະນຸດມີສະຕິສຳປັດຊັນຍະ(ຮູ້ດີຮູ້ຊົ່ວ)ແລະມີມະໂນທຳຈື່ງຕ້ອງປະພຶດຕົນຕໍ່ກັນໃນທາງພີ່ນ້ອງ.' },
  { script: 'Khmer', lang: 'km', fonts: ['Noto Sans Khmer'],
    text: 'មនុស្សទាំងអស់ កើតមកមានសេរីភាព និងសមភាព ក្នុងផ្នែកសេចក្ដីថ្លៃថ្នូរនិងសិទ្ធិ។ មនុស្ស មានវិចារណញ្ញាណនិងសតិសម្បជញ្ញៈជាប់ពីកំណើត ហើយគប្បីប្រព្រឹត្ដចំពោះគ្នាទៅវិញទៅមកក្នុងស្មារតីភាតរភាពជាបងប្អូន។' },
  { script: 'Myanmar (Burmese)', lang: 'my', fonts: ['Noto Sans Myanmar'],
    text: 'လူတိုင်းသည် တူညီ လွတ်လပ်သော ဂုဏ်သိက္ခာဖြင့် လည်းကောင်း၊ တူညီလွတ်လပ်သော အခွင့်အရေးများဖြင့် လည်းကောင်း၊ မွေးဖွားလာသူများ ဖြစ်သည်။ ထိုသူတို့၌ ပိုင်းခြား ဝေဖန်တတ်သော ဉာဏ်နှင့် ကျင့်ဝတ် သိတတ်သော စိတ်တို့ရှိကြ၍ ထိုသူတို့သည် အချင်းချင်း မေတ္တာထား၍ ဆက်ဆံကျင့်သုံးသင့်၏။' },
  { script: 'Tibetan', lang: 'bo', fonts: ['Noto Serif Tibetan'],
    text: 'འགྲོ་བ་མིའི་རིགས་རྒྱུད་ཡོངས་ལ་སྐྱེས་ཙམ་ཉིད་ནས་ཆེ་མཐོངས་དང༌། ཐོབ་ཐངགི་རང་དབང་འདྲ་མཉམ་དུ་ཡོད་ལ། ཁོང་ཚོར་རང་བྱུང་གི་བློ་རྩལ་དང་བསམ་ཚུལ་བཟང་པོ་འདོན་པའི་འོས་བབས་ཀྱང་ཡོད། དེ་བཞིན་ཕན་ཚུན་གཅིག་གིས་གཅིག་ལ་བུ་སྤུན་གྱི་འདུ་ཤེས་འཛིན་པའི་བྱ་སྤྱོད་ཀྱང་ལག་ལེན་བསྟར་དགོས་པ་ཡིན༎' },
  { script: 'Georgian', lang: 'ka', fonts: ['Noto Sans Georgian'],
    text: 'ყოველი ადამიანი იბადება თავისუფალი და თანასწორი თავისი ღირსებითა და უფლებებით. მათ მინიჭებული აქვთ გონება და სინდისი და ერთმანეთის მიმართ უნდა ექცეოდნენ ძმობის სულისკვეთებით.' },
  { script: 'Armenian', lang: 'hy', fonts: ['Noto Sans Armenian'],
    text: 'Բոլոր մարդիկ ծնվում են ազատ ու հավասար իրենց արժանապատվությամբ ու իրավունքներով։ Նրանք ունեն բանականություն ու խիղճ և միմյանց պետք է եղբայրաբար վերաբերվեն։' },
  { script: 'Ethiopic (Amharic)', lang: 'am', fonts: ['Noto Sans Ethiopic'],
    text: 'የሰው፡ልጅ፡ሁሉ፡ሲወለድ፡ነጻና፡በክብርና፡በመብትም፡እኩልነት፡ያለው፡ነው።፡የተፈጥሮ፡ማስተዋልና፡ሕሊና፡ስላለው፡አንዱ፡ሌላውን፡በወንድማማችነት፡መንፈስ፡መመልከት፡ይገባዋል።' },
  { script: 'Ethiopic (Tigrinya)', lang: 'ti', fonts: ['Noto Sans Ethiopic'],
    text: 'ብመንፅር ክብርን መሰልን ኩሎም ሰባት እንትውለዱ ነፃን ማዕሪን እዮም፡፡ ምስትውዓልን ሕልናን ዝተዓደሎም ብምዃኖም ንሕድሕዶም ብሕውነታዊ መንፈስ ክተሓላለዩ ኦለዎም፡፡' },
  { script: 'Thaana (Dhivehi)', lang: 'dv', fonts: ['Noto Sans Thaana'], rtl: true,
    text: 'ހުރިހާ އިންސާނުންވެސް ދުނިޔެއަށް އުފަންވަނީ، މިނިވަންކަމުގައި، ހަމަހަމަ ޙައްޤުތަކަކާއެކު، ހަމަހަމަ ދަރަޖައެއްގައި ކަމޭހިތެވިގެންވާ ބައެއްގެ ގޮތުގައެވެ. ހެޔޮ ވިސްނުމާއި، ހެޔޮބުއްދީގެ ބާރު އެމީހުންނަށް ލިބިގެންވެއެވެ. އަދި އެކަކު އަނެކަކާމެދު އެމީހުން މުޢާމަލާތް ކުރަންވާނީ، އުޚުއްވަތްތެރިކަމުގެ ރޫޙެއްގައެވެ.' },
  { script: 'Syriac (Assyrian Neo-Aramaic)', lang: 'aii', fonts: ['Noto Sans Syriac'], rtl: true,
    text: 'ܟܠ ܒܪܢܫܐ ܒܪܝܠܗ ܚܐܪܐ ܘܒܪܒܪ ܓܘ ܐܝܩܪܐ ܘܙܕܩܐ. ܘܦܝܫܝܠܗ ܝܗܒܐ ܗܘܢܐ ܘܐܢܝܬ. ܒܘܕ ܕܐܗܐ ܓܫܩܬܝ ܥܠ ܐܚܪܢܐ ܓܪܓ ܗܘܝܐ ܒܚܕ ܪܘܚܐ ܕܐܚܢܘܬܐ.' },
  { script: "N'Ko", lang: 'nqo', fonts: ['Noto Sans NKo'], rtl: true,
    text: 'ߞߣߐ߫ ߛߓߍߟߌ߫ ߞߊߡߊ߬ ߞߊ߬ ߞߐߕߐ߮ ߞߎߘߊ ߘߏ߫ ߘߊߦߟߍ߬ ߸ ߏ߬ ߞߐ߫ ߞߊ߬ ߛߓߍߛߋ߲ ߠߎ߬ ߦߪߐ ߟߊߞߊ߬ ߞߊ߬ ߒߞߏ ߕߊ ߛߎߥߊ߲ߘߌ߫ ߸ ߞߺߵߊ߬ ߕߘߍ߬ ߓߘߊ߫ ߓߊ߲߫ ߖߊ߬ߕߋߛߌ߰ߟߴߌߓߟߏ߫ ߏ߬ ߓߊ߫ ߞߍ߫ ߸' },
  // The Arabic comma (U+060C) is not in Noto Sans Adlam.
  { script: 'Adlam (Pular)', lang: 'fuf-Adlm', fonts: ['Noto Sans Adlam'], rtl: true, punctuationFrom: ['Noto Sans Arabic'], readBackUnordered: true,
    text: '𞤋𞤲𞥆𞤢𞤥𞤢 𞤢𞥄𞤣𞤫𞥅𞤶𞤭 𞤬𞤮𞤬 𞤨𞤮𞤼𞤭، 𞤲\'𞤣𞤭𞤥𞤯𞤭𞤣𞤭 𞤫 𞤶𞤭𞤦𞤭𞤲𞤢𞤲𞥆𞤣𞤫 𞤼𞤮 𞤦𞤢𞤲𞥆𞤺𞤫 𞤸𞤢𞤳𞥆𞤫𞥅𞤶𞤭. 𞤉𞤩𞤫 𞤲\'𞤺𞤮𞥅𞤣𞤭 𞤥𞤭𞥅𞤶𞤮 𞤫 𞤸𞤢𞤳𞥆𞤭𞤤𞤢𞤲𞤼𞤢𞥄𞤺𞤢𞤤 𞤫𞤼𞤫 𞤫𞤩𞤫 𞤨𞤮𞤼𞤭 𞤸𞤵𞥅𞤬𞤮 𞤲\'𞤣𞤭𞤪𞤣𞤫 𞤫 𞤲\'𞤣𞤫𞤪 𞤩 𞤭𞤴𞤲𞤺𞤵𞤴𞤵𞤥𞥆𞤢𞥄𞤺𞤵.' },
  { script: 'Tifinagh (Standard Moroccan Tamazight)', lang: 'zgh', fonts: ['Noto Sans Tifinagh'],
    text: 'ⴰⵔ ⴷ ⵜⵜⵍⴰⵍⴰⵏ ⵎⵉⴷⴷⵏ ⴳⴰⵏ ⵉⵍⴻⵍⵍⵉⵜⵏ ⵎⴳⴰⴷⴷⴰⵏ ⵖ ⵡⴰⴷⴷⵓⵔ ⴷ ⵉⵣⵔⴼⴰⵏ, ⵢⵉⵍⵉ ⴰⴽⵯ ⴷⴰⵔⵙⵏ ⵓⵏⵍⵍⵉ ⴷ ⵓⴼⵔⴰⴽ, ⵉⵍⵍⴰ ⴼⵍⵍⴰ ⵙⵏ ⴰⴷ ⵜⵜⵎⵢⴰⵡⴰⵙⵏ ⵏⴳⵔⴰⵜⵙⵏ ⵙ ⵜⴰⴳⵎⴰⵜ.' },
  { script: 'Cherokee', lang: 'chr', fonts: ['Noto Sans Cherokee'],
    text: 'Ꮒꭶꮣ ꭰꮒᏼꮻ ꭴꮎꮥꮕꭲ ꭴꮎꮪꮣꮄꮣ ꭰꮄ ꭱꮷꮃꭽꮙ ꮎꭲ ꭰꮲꮙꮩꮧ ꭰꮄ ꭴꮒꮂ ꭲᏻꮎꮫꮧꭲ. Ꮎꮝꭹꮎꮓ ꭴꮅꮝꭺꮈꮤꮕꭹ ꭴꮰꮿꮝꮧ ꮕᏸꮅꮫꭹ ꭰꮄ ꭰꮣꮕꮦꮯꮣꮝꮧ ꭰꮄ ꭱꮅꮝꮧ ꮟᏼꮻꭽ ꮒꮪꮎꮣꮫꮎꮥꭼꭹ ꮎ ꮧꮎꮣꮕꮯ ꭰꮣꮕꮩ ꭼꮧ.' },
  { script: 'Canadian Aboriginal syllabics (Inuktitut)', lang: 'iu', fonts: ['Noto Sans Canadian Aboriginal'],
    text: 'ᐃᓅᔪᓕᒫᑦ ᐊᓂᖅᑎᕆᔪᓕᒫᑦ ᐃᓅᓚᐅᕐᒪᑕ ᐃᓱᒪᕐᓱᕐᖢᑎᒃ ᐊᒻᒪᓗ ᐊᔾᔨᐅᖃᑎᒌᒃᖢᑎᒃ ᓂᕐᓱᐊᖑᓂᒃᑯᑦ ᐊᒻᒪᓗ ᐱᔪᓐᓇᐃᑎᑎᒍᑦ. ᐃᓱᖃᖅᑐᖁᑎᖃᕐᑎᑕᐅᕙᓕᕐᐳᑦ ᐱᔾᔪᑎᖃᕐᓂᒃᑯᑦ ᖃᑕᙳᑎᒌᑦᑎᐊᕆᐊᖃᕐᓂᒃᑯᓪᓗ.' },
  { script: 'Ol Chiki (Santali)', lang: 'sat', fonts: ['Noto Sans Ol Chiki'],
    text: 'ᱡᱚᱛᱚ ᱞᱮᱠᱟᱱᱚ ᱢᱳᱱᱚ ᱟᱨᱚ ᱚᱫᱷᱤᱠᱟᱨᱚ ᱨᱮᱭᱟᱠᱚ ᱟᱫᱷᱟᱨᱚ ᱨᱮ ᱢᱩᱪᱳᱛᱚ ᱫᱷᱟᱵᱤᱪᱚ ᱥᱣᱚᱛᱚᱱᱛᱨᱚ ᱟᱨᱚ ᱥᱩᱢᱟᱱᱚ ᱠᱳ ᱦᱩᱭᱩᱠᱚᱟ᱾ ᱩᱱᱚᱠᱳ ᱦᱳ ᱵᱩᱫᱫᱷᱤ ᱟᱨᱚ ᱵᱩᱡᱷᱚᱦᱚᱩ ᱠᱳ ᱟᱜᱩ ᱛᱳᱨᱟ ᱵᱟᱠᱟ ᱫᱟᱱᱮᱪᱚ ᱟᱨᱚ ᱢᱤᱠᱚ ᱦᱚᱰᱚ ᱟᱨᱚ ᱫᱳᱥᱟᱨᱚ ᱦᱚᱰᱚ ᱨᱚ ᱟᱯᱱᱟᱨᱚ ᱨᱮᱭᱟᱠᱚ ᱣᱭᱚᱣᱚᱦᱟᱨᱚ ᱦᱩᱭᱩᱠᱚ ᱡᱳᱨᱩᱰᱟ᱾' },
  { script: 'Meetei Mayek (Manipuri)', lang: 'mni-Mtei', fonts: ['Noto Sans Meetei Mayek'],
    text: 'ꯃꯤꯑꯣꯏꯕ ꯈꯨꯗꯤꯡꯃꯛ ꯄꯣꯛꯄ ꯃꯇꯝꯗ ꯅꯤꯡꯇꯝꯃ, ꯑꯃꯗꯤ ꯏꯖꯖꯠꯑꯃꯁꯨꯡ ꯍꯛ ꯃꯥꯟꯅꯅ ꯂꯩꯖꯩ꯫ꯃꯈꯣꯏ ꯄꯨꯝꯅꯃꯛ ꯋꯥꯈꯜ ꯂꯧꯁꯤꯡ ꯁꯦꯡꯏ, ꯑꯐ ꯐꯠꯇ ꯈꯡꯏ, ꯑꯗꯨꯅꯑꯃꯅ ꯑꯃꯒ ꯂꯣꯌꯅꯕꯗ ꯃꯆꯤꯟ ꯃꯅꯥꯑꯣꯒꯨꯝꯅ ꯂꯣꯌꯅꯒꯗꯕꯅꯤ꯫' },
  { script: 'Javanese', lang: 'jv-Java', fonts: ['Noto Sans Javanese'],
    text: '꧋ꦱꦧꦼꦤ꧀ꦲꦸꦮꦺꦴꦁꦏꦭꦲꦶꦂꦫꦏꦺꦏꦤ꧀ꦛꦶꦩꦂꦢꦶꦏꦭꦤ꧀ꦢꦂꦧꦺꦩꦂꦠꦧꦠ꧀ꦭꦤ꧀ꦲꦏ꧀ꦲꦏ꧀ꦏꦁꦥꦝ꧉\u200Bꦏꦧꦺꦃꦥꦶꦤꦫꦶꦁꦔꦤ꧀ꦲꦏꦭ꧀ꦭꦤ꧀ꦏꦭ꧀ꦧꦸꦱꦂꦠꦏꦲꦗꦧ꧀ꦥꦱꦿꦮꦸꦁꦔꦤ꧀ꦲꦁꦒꦺꦴꦤ꧀ꦤꦺꦩꦼꦩꦶꦠꦿꦤ꧀ꦱꦶꦗꦶꦭꦤ꧀ꦱꦶꦗꦶꦤꦺꦏꦤ꧀ꦛꦶꦗꦶꦮꦺꦴꦱꦸꦩꦢꦸꦭꦸꦂ꧉\u200B' },
  { script: 'Japanese', lang: 'ja', fonts: ['Noto Sans JP'],
    text: 'すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心とを授けられており、互いに同胞の精神をもって行動しなければならない。' },
  { script: 'Chinese (Simplified)', lang: 'zh-CN', fonts: ['Noto Sans SC'],
    text: '人人生而自由,在尊严和权利上一律平等。他们赋有理性和良心,并应以兄弟关系的精神相对待。' },
  { script: 'Chinese (Traditional)', lang: 'zh-TW', fonts: ['Noto Sans TC'],
    text: '人人生而自由，在尊嚴和權利上一律平等。他們賦有理性和良心，並應以兄弟關係的精神相對待。' },
  { script: 'Korean', lang: 'ko', fonts: ['Noto Sans KR'],
    text: '모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 부여받았으며 서로 형제애의 정신으로 행동하여야 한다.' },
  { script: 'Mongolian', lang: 'mn-Mong', fonts: ['Noto Sans Mongolian'],
    text: 'ᠬᠦᠮᠦᠨ ᠪᠦᠷ ᠲᠥᠷᠥᠵᠦ ᠮᠡᠨᠳᠡᠯᠡᠬᠦ ᠡᠷᠬᠡ ᠴᠢᠯᠥᠭᠡ ᠲᠡᠢ᠂ ᠠᠳᠠᠯᠢᠬᠠᠨ ᠨᠡᠷ\u180Eᠡ ᠲᠥᠷᠥ ᠲᠡᠢ᠂ ᠢᠵᠢᠯ ᠡᠷᠬᠡ ᠲᠡᠢ ᠪᠠᠢᠠᠭ᠃ ᠣᠶᠤᠨ ᠤᠬᠠᠭᠠᠨ᠂ ᠨᠠᠨᠳᠢᠨ ᠴᠢᠨᠠᠷ ᠵᠠᠶᠠᠭᠠᠰᠠᠨ ᠬᠦᠮᠦᠨ ᠬᠡᠭᠴᠢ ᠥᠭᠡᠷ\u180Eᠡ ᠬᠣᠭᠣᠷᠣᠨᠳᠣ\u180Eᠨ ᠠᠬᠠᠨ ᠳᠡᠭᠦᠦ ᠢᠨ ᠦᠵᠢᠯ ᠰᠠᠨᠠᠭᠠ ᠥᠠᠷ ᠬᠠᠷᠢᠴᠠᠬᠥ ᠤᠴᠢᠷ ᠲᠠᠢ᠃' },
  { script: 'Yi (Nuosu)', lang: 'ii', fonts: ['Noto Sans Yi'],
    text: 'ꊿꂷꃅꄿꐨꐥ，ꌅꅍꀂꏽꐯꒈꃅꐥꌐ。ꊿꊇꉪꍆꌋꆀꁨꉌꑌꐥ，ꄷꀋꁨꂛꊨꅫꃀꃅꐥꄡꑟ。' },
];
