/**
 * One document per writing system, with real text in a language written in it: Article 1 of the
 * Universal Declaration of Human Rights, from the OHCHR translations as collected by the Unicode
 * "UDHR in Unicode" project (title, article heading and text), except where noted in `source`.
 * Each document sets `lang` (and `dir` for right-to-left scripts) and names no font family at all,
 * so that the service's font fallback alone decides how the text is drawn.
 */
import { esc, htmlDocument, inlineStyle } from './assets.ts';
import type { FidelityCase } from './types.ts';

interface ScriptText {
  /** The writing system, as the case's `script`. */
  readonly script: string;
  /** The language, in English. */
  readonly language: string;
  /** BCP 47 tag for `lang`. */
  readonly lang: string;
  readonly dir?: 'rtl';
  /** Where the text comes from. */
  readonly source: string;
  /** The declaration's title in the language ("" when the source has none). */
  readonly title: string;
  /** "Article 1" in the language ("" when the source has none). */
  readonly article: string;
  readonly text: string;
}

const TEXTS: readonly ScriptText[] = [
  { script: "Bengali", language: "Bengali", lang: "bn", source: "UDHR in Unicode",
    title: "মানবাধিকারের সার্বজনীন ঘোষণাপত্র",
    article: "ধারা ১",
    text: "সমস্ত মানুষ স্বাধীনভাবে সমান মর্যাদা এবং অধিকার নিয়ে জন্মগ্রহণ করে। তাঁদের বিবেক এবং বুদ্ধি আছে; সুতরাং সকলেরই একে অপরের প্রতি ভ্রাতৃত্বসুলভ মনোভাব নিয়ে আচরণ করা উচিত।" },
  { script: "Gurmukhi", language: "Punjabi", lang: "pa", source: "UDHR in Unicode",
    title: "ਮਨੁੱਖੀ ਅਧਿਕਾਰਾਂ ਬਾਰੇ ਵਿਸ਼ਵਵਿਆਪੀ ਐਲਾਨਨਾਮਾ",
    article: "ਆਰਟੀਕਲ: 1",
    text: "ਸਾਰਾ ਮਨੁੱਖੀ ਪਰਿਵਾਰ ਆਪਣੀ ਮਹਿਮਾ, ਸ਼ਾਨ ਅਤੇ ਹੱਕਾਂ ਦੇ ਪੱਖੋਂ ਜਨਮ ਤੋਂ ਹੀ ਆਜ਼ਾਦ ਹੈ ਅਤੇ ਸੁਤੇ ਸਿੱਧ ਸਾਰੇ ਲੋਕ ਬਰਾਬਰ ਹਨ । ਉਨ੍ਹਾਂ ਸਭਨਾ ਨੂੰ ਤਰਕ ਅਤੇ ਜ਼ਮੀਰ ਦੀ ਸੌਗਾਤ ਮਿਲੀ ਹੋਈ ਹੈ ਅਤੇ ਉਨ੍ਹਾਂ ਨੂੰ ਭਰਾਤਰੀਭਾਵ ਦੀ ਭਾਵਨਾ ਰਖਦਿਆਂ ਆਪਸ ਵਿਚ ਵਿਚਰਣਾ ਚਾਹੀਦਾ ਹੈ ।" },
  { script: "Gujarati", language: "Gujarati", lang: "gu", source: "UDHR in Unicode",
    title: "માનવ અધિકારોની વિશ્વવ્યાપી ઘોષણા",
    article: "અનુચ્છેદ ૧:",
    text: "પ્રતિષ્ઠા અને અધિકારોની દૃષ્ટિએ સર્વ માનવો જન્મથી સ્વતંત્ર અને સમાન હોય છે. તેમનામાં વિચારશક્તિ અને અંતઃકરણ હોય છે અને તેમણે પરસ્પર બંધુત્વની ભાવનાથી વર્તવું જોઇએ." },
  { script: "Oriya", language: "Odia", lang: "or", source: "Omniglot, as in Google Fonts language data (or_Orya)",
    title: "",
    article: "",
    text: "ସବୁ ମନୁଷ୍ୟ ଜନ୍ମକାଳରୁ ସ୍ୱାଧୀନ. ସେମାନଙ୍କର ମର୍ଯ୍ୟାଦା ଓ ଅଧିକାର ସମାନ. ସେମାନଙ୍କଠାରେ ପ୍ରଜ୍ଞା ଓ ବିବେକ ନିହିତ ଅଛି. ସେମାନେ ପରସ୍ପର ପ୍ରତି ଭାତୃଭାବ ପୋଷଣ କରି କାର୍ଯ୍ୟ କରିବା ଦରକାର." },
  { script: "Tamil", language: "Tamil", lang: "ta", source: "UDHR in Unicode",
    title: "மனித உரிமைகள் பற்றிய உலகப் பிரகடனம்",
    article: "உறுப்புரை 1",
    text: "மனிதப் பிறிவியினர் சகலரும் சுதந்திரமாகவே பிறக்கின்றனர்; அவர்கள் மதிப்பிலும், உரிமைகளிலும் சமமானவர்கள், அவர்கள் நியாயத்தையும் மனச்சாட்சியையும் இயற்பண்பாகப் பெற்றவர்கள். அவர்கள் ஒருவருடனொருவர் சகோதர உணர்வுப் பாங்கில் நடந்துகொள்ளல் வேண்டும்." },
  { script: "Telugu", language: "Telugu", lang: "te", source: "UDHR in Unicode",
    title: "మానవస్వత్వముల సార్వలౌకిక ప్రకటన",
    article: "అనుచ్ఛేదము 1.",
    text: "ప్రతిపత్తిస్వత్వముల విషయమున మానవులెల్లరును జన్మతః స్వతంత్రులును సమానులును నగుదురు. వారు వివేచన-అంతఃకరణ సంపన్నులగుటచే పరస్పరము భ్రాతృభావముతో వర్తింపవలయును." },
  { script: "Kannada", language: "Kannada", lang: "kn", source: "UDHR in Unicode",
    title: "ಮಾನವ ಬಾಧ್ಯತೆಗಳ ಸಾರ್ವತ್ರಿಕ ಪ್ರಕಟನೆ ಪ್ರಸ್ತಾವನೆ",
    article: "ನಿಬಂಧನೆ ೧.",
    text: "ಎಲ್ಲಾ ಮಾನವರೂ ಸ್ವತಂತ್ರರಾಗಿಯೇ ಜನಿಸಿದ್ದಾರೆ. ಹಾಗೂ ಘನತೆ ಮತ್ತು ಹಕ್ಕುಗಳಲ್ಲಿ ಸಮಾನರಾಗಿದ್ದಾರೆ. ವಿವೇಕ ಮತ್ತು ಅಂತಃಕರಣಗಳನ್ನು ಪಡೆದವರಾದ್ದರಿಂದ ಅವರು ಪರಸ್ಪರ ಸಹೋದರ ಭಾವದಿಂದ ವರ್ತಿಸಬೇಕು." },
  { script: "Malayalam", language: "Malayalam", lang: "ml", source: "UDHR in Unicode",
    title: "മനുഷ്യാവകാശങ്ങളെക്കുറിക്കുന്ന പൊതുപ്രഖ്യാപനം",
    article: "വകുപ്പ്‌ 1.",
    text: "മനുഷ്യരെല്ലാവരും തുല്യാവകാശങ്ങളോടും അന്തസ്സോടും സ്വാതന്ത്ര്യത്തോടുംകൂടി ജനിച്ചിട്ടുള്ളവരാണ്‌. അന്യോന്യം ഭ്രാതൃഭാവത്തോടെ പെരുമാറുവാനാണ്‌ മനുഷ്യന്നു വിവേകബുദ്ധിയും മനസ്സാക്ഷിയും സിദ്ധമായിരിക്കുന്നത്‌." },
  { script: "Sinhala", language: "Sinhala", lang: "si", source: "UDHR in Unicode",
    title: "මානව අයිතිවාසිකම් පිළිබඳ විශ්ව ප්‍රකාශනය",
    article: "1 වන වගන්තිය",
    text: "සියලු මනුෂ්‍යයෝ නිදහස්ව උපත ලබා ඇත. ගරුත්වයෙන් හා අයිතිවාසිකම්වලින් සමාන වෙති. යුක්ති අයුක්ති පිළිබඳ හැඟීමෙන් හා හෘදය සාක්ෂියෙන් යුත් ඔවුන්, ඔවුනොවුන්ට සැළකිය යුත්තේ සහෝදරත්වය පිළිබඳ හැඟීමෙනි." },
  { script: "Khmer", language: "Khmer", lang: "km", source: "UDHR in Unicode",
    title: "សេចក្ដីប្រកាសជាសកលស្ដីពីសិទ្ធិមនុស្ស",
    article: "មាត្រា ១",
    text: "មនុស្សទាំងអស់ កើតមកមានសេរីភាព និងសមភាព ក្នុងផ្នែកសេចក្ដីថ្លៃថ្នូរនិងសិទ្ធិ។ មនុស្ស មានវិចារណញ្ញាណនិងសតិសម្បជញ្ញៈជាប់ពីកំណើត ហើយគប្បីប្រព្រឹត្ដចំពោះគ្នាទៅវិញទៅមក ក្នុង ស្មារតីភាតរភាពជាបងប្អូន។" },
  { script: "Lao", language: "Lao", lang: "lo", source: "UDHR in Unicode",
    title: "ປະກາດສາກົນ ກ່ຽວກັບສິດຂອງມະນຸດ",
    article: "ມາດຕາ 1:",
    text: "ມະນຸດເກີດມາມີສິດເສລີພາບ ແລະ ສະເໝີໜ້າກັນໃນທາງກຽດຕິສັກ ແລະ ທາງສິດດ້ວຍມະນຸດມີສະຕິສຳປັດຊັນຍະ(ຮູ້ດີຮູ້ຊົ່ວ)ແລະມີມະໂນທຳຈື່ງຕ້ອງປະພຶດຕົນຕໍ່ກັນໃນທາງພີ່ນ້ອງ." },
  { script: "Myanmar", language: "Burmese", lang: "my", source: "UDHR in Unicode",
    title: "အပြည်ပြည်ဆိုင်ရာ လူ့အခွင့်အရေး ကြေညာစာတမ်း",
    article: "အပိုဒ် ၁",
    text: "လူတိုင်းသည် တူညီ လွတ်လပ်သော ဂုဏ်သိက္ခာဖြင့် လည်းကောင်း၊ တူညီလွတ်လပ်သော အခွင့်အရေးများဖြင့် လည်းကောင်း၊ မွေးဖွားလာသူများ ဖြစ်သည်။ ထိုသူတို့၌ ပိုင်းခြား ဝေဖန်တတ်သော ဉာဏ်နှင့် ကျင့်ဝတ် သိတတ်သော စိတ်တို့ရှိကြ၍ ထိုသူတို့သည် အချင်းချင်း မေတ္တာထား၍ ဆက်ဆံကျင့်သုံးသင့်၏။" },
  { script: "Georgian", language: "Georgian", lang: "ka", source: "UDHR in Unicode",
    title: "ადამიანთა უფლებების საყოველთაო დეკლარაცია",
    article: "მუხლი 1.",
    text: "ყოველი ადამიანი იბადება თავისუფალი და თანასწორი თავისი ღირსებითა და უფლებებით. მათ მინიჭებული აქვთ გონება და სინდისი და ერთმანეთის მიმართ უნდა ექცეოდნენ ძმობის სულისკვეთებით." },
  { script: "Armenian", language: "Armenian", lang: "hy", source: "UDHR in Unicode",
    title: "ՄԱՐԴՈՒ ԻՐԱՎՈՒՆՔՆԵՐԻ ՀԱՄԸՆԴՀԱՆՈՒՐ ՀՌՉԱԿԱԳԻՐ",
    article: "Հոդված 1",
    text: "Բոլոր մարդիկ ծնվում են ազատ ու հավասար իրենց արժանապատվությամբ ու իրավունքներով։ Նրանք ունեն բանականություն ու խիղճ և միմյանց պետք է եղբայրաբար վերաբերվեն։" },
  { script: "Ethiopic", language: "Amharic", lang: "am", source: "UDHR in Unicode",
    title: "ስለሰብአዊ፡መብቶች፡ለማስተማር፡ የሚረዱ፡አንዳንድ፡ዘዴዎች።",
    article: "አንቀጽ፡፩፤",
    text: "የሰው፡ልጅ፡ሁሉ፡ሲወለድ፡ነጻና፡በክብርና፡በመብትም፡እኩልነት፡ያለው፡ነው።፡የተፈጥሮ፡ማስተዋልና፡ሕሊና፡ስላለው፡አንዱ፡ሌላውን፡በወንድማማችነት፡መንፈስ፡መመልከት፡ይገባዋል።" },
  { script: "Ethiopic", language: "Tigrinya", lang: "ti", source: "UDHR in Unicode",
    title: "ዓለምለኻዊ ድንጋገ ሰብኦዊ መሰላት",
    article: "ዓንቀፅ 1",
    text: "ብመንፅር ክብርን መሰልን ኩሎም ሰባት እንትውለዱ ነፃን ማዕሪን እዮም፡፡ ምስትውዓልን ሕልናን ዝተዓደሎም ብምዃኖም ንሕድሕዶም ብሕውነታዊ መንፈስ ክተሓላለዩ ኦለዎም፡፡" },
  { script: "Tibetan", language: "Tibetan", lang: "bo", source: "UDHR in Unicode",
    title: "༄༅༎ ཡོངས་ཁྱབ་གསལ་བསྒྲགས་འགྲོ་བ་མིའི་ཐོབ་ཐང༌།",
    article: "དོན་ཚན་དང་པོ།",
    text: "འགྲོ་བ་མིའི་རིགས་རྒྱུད་ཡོངས་ལ་སྐྱེས་ཙམ་ཉིད་ནས་ཆེ་མཐོངས་དང༌། ཐོབ་ཐངགི་རང་དབང་འདྲ་མཉམ་དུ་ཡོད་ལ། ཁོང་ཚོར་རང་བྱུང་གི་བློ་རྩལ་དང་བསམ་ཚུལ་བཟང་པོ་འདོན་པའི་འོས་བབས་ཀྱང་ཡོད། དེ་བཞིན་ཕན་ཚུན་གཅིག་གིས་གཅིག་ལ་བུ་སྤུན་གྱི་འདུ་ཤེས་འཛིན་པའི་བྱ་སྤྱོད་ཀྱང་ལག་ལེན་བསྟར་དགོས་པ་ཡིན༎" },
  { script: "Thaana", language: "Dhivehi", lang: "dv", dir: "rtl", source: "UDHR in Unicode",
    title: "",
    article: "1 ވަނަ މާއްދާ",
    text: "ހުރިހާ އިންސާނުންވެސް ދުނިޔެއަށް އުފަންވަނީ، މިނިވަންކަމުގައި، ހަމަހަމަ ޙައްޤުތަކަކާއެކު، ހަމަހަމަ ދަރަޖައެއްގައި ކަމޭހިތެވިގެންވާ ބައެއްގެ ގޮތުގައެވެ. ހެޔޮ ވިސްނުމާއި، ހެޔޮބުއްދީގެ ބާރު އެމީހުންނަށް ލިބިގެންވެއެވެ. އަދި އެކަކު އަނެކަކާމެދު އެމީހުން މުޢާމަލާތް ކުރަންވާނީ، އުޚުއްވަތްތެރިކަމުގެ ރޫޙެއްގައެވެ." },
  { script: "Mongolian", language: "Mongolian", lang: "mn-Mong", source: "UDHR in Unicode",
    title: "",
    article: "",
    text: "ᠬᠦᠮᠦᠨ ᠪᠦᠷ ᠲᠥᠷᠥᠵᠦ ᠮᠡᠨᠳᠡᠯᠡᠬᠦ ᠡᠷᠬᠡ ᠴᠢᠯᠥᠭᠡ ᠲᠡᠢ᠂ ᠠᠳᠠᠯᠢᠬᠠᠨ ᠨᠡᠷ᠎ᠡ ᠲᠥᠷᠥ ᠲᠡᠢ᠂ ᠢᠵᠢᠯ ᠡᠷᠬᠡ ᠲᠡᠢ ᠪᠠᠢᠠᠭ᠃ ᠣᠶᠤᠨ ᠤᠬᠠᠭᠠᠨ᠂ ᠨᠠᠨᠳᠢᠨ ᠴᠢᠨᠠᠷ ᠵᠠᠶᠠᠭᠠᠰᠠᠨ ᠬᠦᠮᠦᠨ ᠬᠡᠭᠴᠢ ᠥᠭᠡᠷ᠎ᠡ ᠬᠣᠭᠣᠷᠣᠨᠳᠣ᠎ᠨ ᠠᠬᠠᠨ ᠳᠡᠭᠦᠦ ᠢᠨ ᠦᠵᠢᠯ ᠰᠠᠨᠠᠭᠠ ᠥᠠᠷ ᠬᠠᠷᠢᠴᠠᠬᠥ ᠤᠴᠢᠷ ᠲᠠᠢ᠃" },
  { script: "Canadian Syllabics", language: "Inuktitut", lang: "iu", source: "UDHR in Unicode",
    title: "ᓯᓚᕐᔪᐊᕐᒥᐅᑦ ᓇᓗᓇᐃᖅᓯᐅᑎᖓ ᑭᓇᒃᑯᑐᐃᓐᓇᐃᑦ ᐱᔪᓐᓇᐅᑎᖏᑦ",
    article: "ᐃᓚᖓ 1.",
    text: "ᐃᓅᔪᓕᒫᑦ ᐊᓂᖅᑎᕆᔪᓕᒫᑦ ᐃᓅᓚᐅᕐᒪᑕ ᐃᓱᒪᕐᓱᕐᖢᑎᒃ ᐊᒻᒪᓗ ᐊᔾᔨᐅᖃᑎᒌᒃᖢᑎᒃ ᓂᕐᓱᐊᖑᓂᒃᑯᑦ ᐊᒻᒪᓗ ᐱᔪᓐᓇᐃᑎᑎᒍᑦ. ᐃᓱᖃᖅᑐᖁᑎᖃᕐᑎᑕᐅᕙᓕᕐᐳᑦ ᐱᔾᔪᑎᖃᕐᓂᒃᑯᑦ ᖃᑕᙳᑎᒌᑦᑎᐊᕆᐊᖃᕐᓂᒃᑯᓪᓗ." },
  { script: "Cherokee", language: "Cherokee", lang: "chr", source: "UDHR in Unicode",
    title: "Ꮒꭼꮎꮫ Ꮧꭶꮓꮳꮃꮕꭲ Ꭰꮒᏼꮻ Ꭴꮒꮂ Ꭲᏻꮎꮫꮧꭲ",
    article: "Ꭰꮿꮩꮈ 1",
    text: "Ꮒꭶꮣ ꭰꮒᏼꮻ ꭴꮎꮥꮕꭲ ꭴꮎꮪꮣꮄꮣ ꭰꮄ ꭱꮷꮃꭽꮙ ꮎꭲ ꭰꮲꮙꮩꮧ ꭰꮄ ꭴꮒꮂ ꭲᏻꮎꮫꮧꭲ. Ꮎꮝꭹꮎꮓ ꭴꮅꮝꭺꮈꮤꮕꭹ ꭴꮰꮿꮝꮧ ꮕᏸꮅꮫꭹ ꭰꮄ ꭰꮣꮕꮦꮯꮣꮝꮧ ꭰꮄ ꭱꮅꮝꮧ ꮟᏼꮻꭽ ꮒꮪꮎꮣꮫꮎꮥꭼꭹ ꮎ ꮧꮎꮣꮕꮯ ꭰꮣꮕꮩ ꭼꮧ." },
  { script: "Syriac", language: "Assyrian Neo-Aramaic", lang: "aii", dir: "rtl", source: "UDHR in Unicode",
    title: "ܒܘܕܩܐ ܬܝܒ݂ܠܝܐ ܠܦܘܬ ܙܕܩܐ ܐܢܫܝܐ",
    article: "ܡܠܘܐܐ 1",
    text: "ܟܠ ܒܪܢܫܐ ܒܪܝܠܗ ܚܐܪܐ ܘܒܪܒܪ ܓܘ ܐܝܩܪܐ ܘܙܕܩܐ. ܘܦܝܫܝܠܗ ܝܗܒܐ ܗܘܢܐ ܘܐܢܝܬ. ܒܘܕ ܕܐܗܐ ܓܫܩܬܝ ܥܠ ܐܚܪܢܐ ܓܪܓ ܗܘܝܐ ܒܚܕ ܪܘܚܐ ܕܐܚܢܘܬܐ." },
  { script: "Tifinagh", language: "Tamazight (Standard Moroccan)", lang: "zgh", source: "UDHR in Unicode",
    title: "ⴰⵍⵖⵓ ⴰⵎⴰⴹⵍⴰⵏ ⵏ ⵉⵣⵔⴼⴰⵏ ⵏ ⵓⴼⴳⴰⵏ",
    article: "ⴰⵎⴰⴳⵔⴰⴷ 1",
    text: "ⴰⵔ ⴷ ⵜⵜⵍⴰⵍⴰⵏ ⵎⵉⴷⴷⵏ ⴳⴰⵏ ⵉⵍⴻⵍⵍⵉⵜⵏ ⵎⴳⴰⴷⴷⴰⵏ ⵖ ⵡⴰⴷⴷⵓⵔ ⴷ ⵉⵣⵔⴼⴰⵏ, ⵢⵉⵍⵉ ⴰⴽⵯ ⴷⴰⵔⵙⵏ ⵓⵏⵍⵍⵉ ⴷ ⵓⴼⵔⴰⴽ, ⵉⵍⵍⴰ ⴼⵍⵍⴰ ⵙⵏ ⴰⴷ ⵜⵜⵎⵢⴰⵡⴰⵙⵏ ⵏⴳⵔⴰⵜⵙⵏ ⵙ ⵜⴰⴳⵎⴰⵜ." },
  { script: "N'Ko", language: "N'Ko", lang: "nqo", dir: "rtl", source: "Google Fonts language data sample text (nqo_Nkoo); not the UDHR",
    title: "",
    article: "",
    text: "ߞߣߐ߫ ߛߓߍߟߌ߫ ߞߊߡߊ߬ ߞߊ߬ ߞߐߕߐ߮ ߞߎߘߊ ߘߏ߫ ߘߊߦߟߍ߬ ߸ ߏ߬ ߞߐ߫ ߞߊ߬ ߛߓߍߛߋ߲ ߠߎ߬ ߦߪߐ ߟߊߞߊ߬ ߞߊ߬ ߒߞߏ ߕߊ ߛߎߥߊ߲ߘߌ߫ ߸ ߞߺߵߊ߬ ߕߘߍ߬ ߓߘߊ߫ ߓߊ߲߫ ߖߊ߬ߕߋߛߌ߰ߟߴߌߓߟߏ߫ ߏ߬ ߓߊ߫ ߞߍ߫ ߸" },
  { script: "Ol Chiki", language: "Santali", lang: "sat", source: "Omniglot, as in Google Fonts language data (sat_Olck)",
    title: "",
    article: "",
    text: "ᱡᱚᱛᱚ ᱞᱮᱠᱟᱱᱚ ᱢᱳᱱᱚ ᱟᱨᱚ ᱚᱫᱷᱤᱠᱟᱨᱚ ᱨᱮᱭᱟᱠᱚ ᱟᱫᱷᱟᱨᱚ ᱨᱮ ᱢᱩᱪᱳᱛᱚ ᱫᱷᱟᱵᱤᱪᱚ ᱥᱣᱚᱛᱚᱱᱛᱨᱚ ᱟᱨᱚ ᱥᱩᱢᱟᱱᱚ ᱠᱳ ᱦᱩᱭᱩᱠᱚᱟ᱾ ᱩᱱᱚᱠᱳ ᱦᱳ ᱵᱩᱫᱫᱷᱤ ᱟᱨᱚ ᱵᱩᱡᱷᱚᱦᱚᱩ ᱠᱳ ᱟᱜᱩ ᱛᱳᱨᱟ ᱵᱟᱠᱟ ᱫᱟᱱᱮᱪᱚ ᱟᱨᱚ ᱢᱤᱠᱚ ᱦᱚᱰᱚ ᱟᱨᱚ ᱫᱳᱥᱟᱨᱚ ᱦᱚᱰᱚ ᱨᱚ ᱟᱯᱱᱟᱨᱚ ᱨᱮᱭᱟᱠᱚ ᱣᱭᱚᱣᱚᱦᱟᱨᱚ ᱦᱩᱭᱩᱠᱚ ᱡᱳᱨᱩᱰᱟ᱾" },
  { script: "Javanese", language: "Javanese", lang: "jv", source: "UDHR in Unicode",
    title: "ꦥꦿꦚꦠꦤ꧀ꦲꦸꦩꦸꦩ꧀ꦔꦼꦤꦤꦶꦲꦏ꧀ꦲꦏ꧀ꦲꦱꦱ꧀ꦱꦶꦲꦸꦩꦠ꧀ꦩꦤꦸꦁꦱ",
    article: "ꦧꦧ꧀꧇꧑꧇​",
    text: "꧋ꦱꦧꦼꦤ꧀ꦲꦸꦮꦺꦴꦁꦏꦭꦲꦶꦂꦫꦏꦺꦏꦤ꧀ꦛꦶꦩꦂꦢꦶꦏꦭꦤ꧀ꦢꦂꦧꦺꦩꦂꦠꦧꦠ꧀ꦭꦤ꧀ꦲꦏ꧀ꦲꦏ꧀ꦏꦁꦥꦝ꧉​ꦏꦧꦺꦃꦥꦶꦤꦫꦶꦁꦔꦤ꧀ꦲꦏꦭ꧀ꦭꦤ꧀ꦏꦭ꧀ꦧꦸꦱꦂꦠꦏꦲꦗꦧ꧀ꦥꦱꦿꦮꦸꦁꦔꦤ꧀ꦲꦁꦒꦺꦴꦤ꧀ꦤꦺꦩꦼꦩꦶꦠꦿꦤ꧀ꦱꦶꦗꦶꦭꦤ꧀ꦱꦶꦗꦶꦤꦺꦏꦤ꧀ꦛꦶꦗꦶꦮꦺꦴꦱꦸꦩꦢꦸꦭꦸꦂ꧉​" },
  { script: "Yi", language: "Nuosu (Sichuan Yi)", lang: "ii", source: "UDHR in Unicode",
    title: "《ꋧꃅꊽꌅꅍꄜꋊꄯꒉ》",
    article: "ꋍꏢꏡꌠ",
    text: "ꊿꂷꃅꄿꐨꐥ，ꌅꅍꀂꏽꐯꒈꃅꐥꌐ。ꊿꊇꉪꍆꌋꆀꁨꉌꑌꐥ，ꄷꀋꁨꂛꊨꅫꃀꃅꐥꄡꑟ。" },
  { script: "Adlam", language: "Pular (Fulani)", lang: "ff-Adlm", dir: "rtl", source: "UDHR in Unicode",
    title: "𞤇𞤀𞤐𞤘𞤋𞤐𞤀𞤐𞤁𞤉 𞤖𞤋𞤂𞥆𞤀𞤒𞤀𞤐𞤑𞤌𞥅𞤈𞤉 𞤔𞤌𞤔𞥆𞤀𞤐𞤍𞤉 𞤐𞤉𞤍𞥆𞤀𞤐𞤑𞤉 𞤍𞤉𞤐",
    article: "𞤑𞤵𞥅𞤤𞤢𞤤 𞤺𞤢𞤣𞤢𞤲𞤢𞤤",
    text: "𞤋𞤲𞥆𞤢𞤥𞤢 𞤢𞥄𞤣𞤫𞥅𞤶𞤭 𞤬𞤮𞤬 𞤨𞤮𞤼𞤭، 𞤲'𞤣𞤭𞤥𞤯𞤭𞤣𞤭 𞤫 𞤶𞤭𞤦𞤭𞤲𞤢𞤲𞥆𞤣𞤫 𞤼𞤮 𞤦𞤢𞤲𞥆𞤺𞤫 𞤸𞤢𞤳𞥆𞤫𞥅𞤶𞤭. 𞤉𞤩𞤫 𞤲'𞤺𞤮𞥅𞤣𞤭 𞤥𞤭𞥅𞤶𞤮 𞤫 𞤸𞤢𞤳𞥆𞤭𞤤𞤢𞤲𞤼𞤢𞥄𞤺𞤢𞤤 𞤫𞤼𞤫 𞤫𞤩𞤫 𞤨𞤮𞤼𞤭 𞤸𞤵𞥅𞤬𞤮 𞤲'𞤣𞤭𞤪𞤣𞤫 𞤫 𞤲'𞤣𞤫𞤪 𞤩 𞤭𞤴𞤲𞤺𞤵𞤴𞤵𞤥𞥆𞤢𞥄𞤺𞤵." },
  { script: "Meetei Mayek", language: "Manipuri (Meitei)", lang: "mni-Mtei", source: "Omniglot, as in Google Fonts language data (mni_Mtei)",
    title: "",
    article: "",
    text: "ꯃꯤꯑꯣꯏꯕ ꯈꯨꯗꯤꯡꯃꯛ ꯄꯣꯛꯄ ꯃꯇꯝꯗ ꯅꯤꯡꯇꯝꯃ, ꯑꯃꯗꯤ ꯏꯖꯖꯠꯑꯃꯁꯨꯡ ꯍꯛ ꯃꯥꯟꯅꯅ ꯂꯩꯖꯩ꯫ꯃꯈꯣꯏ ꯄꯨꯝꯅꯃꯛ ꯋꯥꯈꯜ ꯂꯧꯁꯤꯡ ꯁꯦꯡꯏ, ꯑꯐ ꯐꯠꯇ ꯈꯡꯏ, ꯑꯗꯨꯅꯑꯃꯅ ꯑꯃꯒ ꯂꯣꯌꯅꯕꯗ ꯃꯆꯤꯟ ꯃꯅꯥꯑꯣꯒꯨꯝꯅ ꯂꯣꯌꯅꯒꯗꯕꯅꯤ꯫" },
  { script: "Hebrew", language: "Hebrew", lang: "he", dir: "rtl", source: "UDHR in Unicode",
    title: "הכרזה לכל באי עולם בדבר זכויות האדם",
    article: "סעיף א.",
    text: "כל בני אדם נולדו בני חורין ושווים בערכם ובזכויותיהם. כולם חוננו בתבונה ובמצפון, לפיכך חובה עליהם לנהוג איש ברעהו ברוח של אחוה." },
  { script: "Thai", language: "Thai", lang: "th", source: "UDHR in Unicode",
    title: "ปฏิญญาสากลว่าด้วยสิทธิมนุษยชน",
    article: "ข้อ 1",
    text: "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักดิ์และสิทธิ ต่างมีเหตุผลและมโนธรรม และควรปฏิบัติต่อกันด้วยเจตนารมณ์แห่งภราดรภาพ" },
  { script: "Devanagari", language: "Hindi", lang: "hi", source: "UDHR in Unicode",
    title: "मानव अधिकारों की सार्वभौम घोषणा",
    article: "अनुच्छेद १.",
    text: "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता और समानता प्राप्त है । उन्हें बुद्धि और अन्तरात्मा की देन प्राप्त है और परस्पर उन्हें भाईचारे के भाव से बर्ताव करना चाहिए ।" },
  { script: "Arabic", language: "Arabic", lang: "ar", dir: "rtl", source: "UDHR in Unicode",
    title: "الإعلان العالمي لحقوق الإنسان",
    article: "المادة 1",
    text: "يولد جميع الناس أحرارًا متساوين في الكرامة والحقوق. وقد وهبوا عقلاً وضميرًا وعليهم أن يعامل بعضهم بعضًا بروح الإخاء." },
  { script: "Arabic", language: "Urdu", lang: "ur", dir: "rtl", source: "UDHR in Unicode",
    title: "انسانی حقوق کا عالمی منشور",
    article: "دفعہ ۱۔",
    text: "تمام انسان آزاد اور حقوق و عزت کے اعتبار سے برابر پیدا ہوئے ہیں۔ انہیں ضمیر اور عقل ودیعت ہوئی ہے۔ اس لئے انہیں ایک دوسرے کے ساتھ بھائی چارے کا سلوک کرنا چاہیئے۔" },
  { script: "Arabic", language: "Persian", lang: "fa", dir: "rtl", source: "UDHR in Unicode",
    title: "اعلامیه جهانی حقوق بشر",
    article: "مادهٔ اول",
    text: "تمام افراد بشر آزاد بدنیا میایند و از لحاظ حیثیت و حقوق با هم برابرند. همه دارای عقل و وجدان میباشند و باید نسبت بیکدیگر با روح برادری رفتار کنند." },
  { script: "Han", language: "Chinese (Simplified)", lang: "zh-CN", source: "UDHR in Unicode",
    title: "世界人权宣言",
    article: "第一条",
    text: "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心，并应以兄弟关系的精神相对待。" },
  { script: "Japanese", language: "Japanese", lang: "ja", source: "UDHR in Unicode",
    title: "『世界人権宣言』",
    article: "第１条",
    text: "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。人間は、理性と良心とを授けられており、互いに同胞の精神をもって行動しなければならない。" },
  { script: "Hangul", language: "Korean", lang: "ko", source: "UDHR in Unicode",
    title: "세 계 인 권 선 언",
    article: "제 1 조",
    text: "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다. 인간은 천부적으로 이성과 양심을 부여받았으며 서로 형제애의 정신으로 행동하여야 한다." },
  { script: "Greek", language: "Greek", lang: "el", source: "UDHR in Unicode",
    title: "ΟΙΚΟΥΜΕΝΙΚΗ ΔΙΑΚΗΡΥΞΗ ΓΙΑ ΤΑ ΑΝΘΡΩΠΙΝΑ ΔΙΚΑΙΩΜΑΤΑ",
    article: "ΑΡΘΡΟ 1",
    text: "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια και τα δικαιώματα. Είναι προικισμένοι με λογική και συνείδηση, και οφείλουν να συμπεριφέρονται μεταξύ τους με πνεύμα αδελφοσύνης." },
  { script: "Cyrillic", language: "Russian", lang: "ru", source: "UDHR in Unicode",
    title: "Всеобщая декларация прав человека",
    article: "Статья 1",
    text: "Все люди рождаются свободными и равными в своем достоинстве и правах. Они наделены разумом и совестью и должны поступать в отношении друг друга в духе братства." },
  { script: "Latin", language: "Vietnamese", lang: "vi", source: "UDHR in Unicode",
    title: "Tuyên ngôn toàn thế giới về nhân quyền của Liên Hợp Quốc",
    article: "Điều 1:",
    text: "Tất cả mọi người sinh ra đều được tự do và bình đẳng về nhân phẩm và quyền. Mọi con người đều được tạo hoá ban cho lý trí và lương tâm và cần phải đối xử với nhau trong tình bằng hữu." },
];

const CSS = `
  @page { size: A4; margin: 22mm 20mm; }
  body { margin: 0; font-size: 15pt; line-height: 1.9; }
  .caption { font-size: 8.5pt; line-height: 1.4; color: #555; border-bottom: 1px solid #bbb; padding-bottom: 2mm; margin-bottom: 8mm; }
  h1 { font-size: 21pt; line-height: 1.5; margin: 0 0 4mm; }
  h2 { font-size: 16pt; margin: 0 0 3mm; }
  p.article { margin: 0 0 6mm; }
  .vertical { writing-mode: vertical-lr; height: 215mm; }
`;

/** A short, readable file-name part for the language: "Punjabi" -> "punjabi". */
const slug = (text: string) => text.toLowerCase().replace(/\(.*\)/, '').trim().replace(/[^a-z]+/g, '-').replace(/^-|-$/g, '');

function scriptCase(entry: ScriptText): FidelityCase {
  const caption =
    `<div class="caption" lang="en" dir="ltr">Universal Declaration of Human Rights, Article 1 — ${esc(entry.language)} in ${esc(entry.script)} script` +
    ` (lang="${esc(entry.lang)}"). Source: ${esc(entry.source)}.</div>`;
  const content =
    (entry.title ? `<h1>${esc(entry.title)}</h1>` : '') + (entry.article ? `<h2>${esc(entry.article)}</h2>` : '') + `<p class="article">${esc(entry.text)}</p>`;
  // Traditional Mongolian is written in vertical lines running left to right.
  const body = caption + (entry.script === 'Mongolian' ? `<div class="vertical">${content}</div>` : content);
  return {
    name: slug(entry.script) === slug(entry.language) ? `script-${slug(entry.script)}` : `script-${slug(entry.script)}-${slug(entry.language)}`,
    title: `${entry.language} (${entry.script} script): UDHR Article 1 with lang="${entry.lang}"${entry.dir ? ', dir="rtl"' : ''} and no font-family`,
    html: htmlDocument({ lang: entry.lang, ...(entry.dir && { dir: entry.dir }), title: `${entry.language} — UDHR Article 1`, head: inlineStyle(CSS), body }),
    script: entry.script,
  };
}

export function scriptCases(): FidelityCase[] {
  return TEXTS.map(scriptCase);
}
